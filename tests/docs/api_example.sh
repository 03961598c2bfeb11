#!/usr/bin/env bash
# docs/api.md's example is a valid request: attrib-submit --print-request of the example
# bundle (docs/examples/api/kubernetes-xid79) validates against the published schema
# (docs/schemas/attribute-request.v1.schema.json), and the schema refuses what the API
# refuses (no scheduler, scheduler slurm, an unknown source).
#   api_example.sh ATTRIB_SUBMIT SOURCE_DIR
set -euo pipefail
submit=$1 src=$2
request=$("$submit" --print-request "$src/docs/examples/api/kubernetes-xid79")
/usr/bin/python3 - "$src/docs/schemas/attribute-request.v1.schema.json" "$request" <<'PY'
import copy, json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
request = json.loads(sys.argv[2])
errors = [e.message for e in validator.iter_errors(request)]
assert not errors, f"the example request is not valid: {errors}"
assert request["job"]["scheduler"] == "kubernetes" and len(request["observations"]) > 10, request["job"]
def refused(change, what):
    bad = copy.deepcopy(request)
    change(bad)
    assert list(validator.iter_errors(bad)), f"the schema accepts {what}"
refused(lambda r: r["job"].pop("scheduler"), "a job without scheduler")
refused(lambda r: r["job"].__setitem__("scheduler", "slurm"), "scheduler slurm")
refused(lambda r: r["observations"][0].__setitem__("source", "dmesg"), "an unknown source")
refused(lambda r: r.__setitem__("extra", 1), "an unknown top-level field")
print(f"api example: valid, {len(request['observations'])} observations; 4 invalid variants refused")
PY
