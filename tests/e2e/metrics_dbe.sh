#!/usr/bin/env bash
# Metrics that decide, end to end, with the collector's default queries: a real Prometheus
# scrapes a stand-in serving the metric families and labels dcgm-exporter and
# node_exporter export, every second. While a job runs on n2, GPU 3's double-bit ECC
# counter rises from 0 to 2: the prometheus collector reads the job's window, the rule
# dcgm.ecc_dbe (rules/pack/dcgm.yaml, threshold: an increase of at least 1) makes it a
# trusted gpu.ecc_uncorrectable event, and the verdict in sacct is GPU_HARDWARE on n2 by
# gpu.ecc_uncorrectable_metric, not the job's own exit. While a second job runs on n1,
# n1's EDAC uncorrectable count rises: HOST_HARDWARE on n1 by
# host.memory_uncorrected_metric (rules/pack/node_metrics.yaml).
source "$(dirname "$0")/lib.sh"
setup_run metrics_dbe
free_port() { /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
exporter_port=$(free_port)
prometheus_port=$(free_port)
metrics=$run_dir/metrics.prom
dbe=0 edac_ue=0
serve() {  # what the exporter serves from now on (renamed into place)
  cat > "$metrics.new" <<PROM
# HELP DCGM_FI_DEV_ECC_DBE_VOL_TOTAL Total number of double-bit volatile ECC errors.
# TYPE DCGM_FI_DEV_ECC_DBE_VOL_TOTAL counter
DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{gpu="3",UUID="GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52",pci_bus_id="00000000:3B:00.0",device="nvidia3",modelName="NVIDIA H100 80GB HBM3",Hostname="n2"} $dbe
# HELP node_edac_uncorrectable_errors_total Total uncorrectable memory errors.
# TYPE node_edac_uncorrectable_errors_total counter
node_edac_uncorrectable_errors_total{controller="0",instance="n1:9100"} $edac_ue
# HELP node_edac_correctable_errors_total Total correctable memory errors.
# TYPE node_edac_correctable_errors_total counter
node_edac_correctable_errors_total{controller="0",instance="n1:9100"} 3
PROM
  mv "$metrics.new" "$metrics"
}
serve
/usr/bin/python3 - "$exporter_port" "$metrics" > "$run_dir/exporter.log" 2>&1 <<'PY' &
import http.server, sys
class Metrics(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = open(sys.argv[2], "rb").read()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Metrics).serve_forever()
PY
exporter_pid=$!
cat > "$run_dir/prometheus.yml" <<YAML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: dcgm
    honor_labels: true
    static_configs: [{targets: ["127.0.0.1:$exporter_port"]}]
YAML
prometheus --config.file="$run_dir/prometheus.yml" --storage.tsdb.path="$run_dir/tsdb" \
  --web.listen-address="127.0.0.1:$prometheus_port" > "$run_dir/prometheus.log" 2>&1 &
prometheus_pid=$!
trap 'kill "$exporter_pid" "$prometheus_pid" 2>/dev/null; stop_attributiond' EXIT
for _ in $(seq 150); do curl -sf "http://127.0.0.1:$prometheus_port/-/ready" >/dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$prometheus_port/-/ready" >/dev/null || { tail "$run_dir/prometheus.log" >&2; fail "prometheus not ready"; }
cat >> "$run_dir/attrib.yaml" <<YAML
  - kind: prometheus
    options:
      url: http://127.0.0.1:$prometheus_port
      step_s: 1
YAML
start_daemon
# failing_job_while NODE SERIES VALUE WHAT: a job on NODE that fails; while it runs, the
# exporter serves SERIES (dbe, edac_ue) at VALUE; sets $job and waits for its verdict.
failing_job_while() {
  job=$(sbatch --parsable -N1 -w "$1" --output=/dev/null --wrap 'sleep 6; exit 1' | cut -d';' -f1)
  wait_state "$job" RUNNING
  sleep 2
  printf -v "$2" '%s' "$3"
  serve
  note "$4 while job $job runs"
  await_verdict "$job"
}
failing_job_while n2 dbe 2 "GPU 3's DBE counter on n2: 0 -> 2"
note "verdict: $(jq -c '{domain, rule: .root_cause.rule, summary: .root_cause.summary, action: .recommended_action}' "$run_dir/verdict-$job.json")"
expect_eq "$(verdict "$job" .domain)" GPU_HARDWARE "domain"
expect_eq "$(verdict "$job" .root_cause.rule)" gpu.ecc_uncorrectable_metric "root cause rule"
expect_eq "$(verdict "$job" '.root_cause.event | "\(.node) \(.source) \(.trusted) \(.fields.gpu) \(.fields.delta)"')" \
  "n2 prometheus true 3 2" "the event: n2's GPU 3, trusted metric, +2"
expect_eq "$(verdict "$job" '[.coverage[] | select(.source == "prometheus" and .node == "n2") | .status] | join(",")')" ok \
  "coverage of the metrics"
expect_contains "$(sacct_field "$job" Comment)" "attrib: GPU_HARDWARE node=n2" "sacct comment"

failing_job_while n1 edac_ue 1 "n1's EDAC uncorrectable count: 0 -> 1"
expect_eq "$(verdict "$job" .domain)" HOST_HARDWARE "domain"
expect_eq "$(verdict "$job" .root_cause.rule)" host.memory_uncorrected_metric "root cause rule"
expect_eq "$(verdict "$job" '.root_cause.event | "\(.node) \(.source) \(.trusted) \(.fields.controller) \(.fields.delta)"')" \
  "n1 prometheus true 0 1" "the event: n1's memory controller 0, trusted metric, +1"
expect_contains "$(sacct_field "$job" Comment)" "attrib: HOST_HARDWARE node=n1" "sacct comment"
expect_no_node_drained
echo "PASS: metric rises during the job decided the verdicts, read by the default queries"
