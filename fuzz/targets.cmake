# The fuzz targets (fuzz/<name>_fuzzer.cpp) and what they link. Shared by fuzz/CMakeLists.txt
# (the libFuzzer binaries, ATTRIB_FUZZ=ON) and tests/unit/fuzz/ (the regression replay in
# every build).
set(ATTRIB_FUZZ_TARGETS
  line_stamp        # rules/line_time.h parse_line_stamp, core/types.h parse_iso_time
  kmsg              # collectors/kmsg_collector.h KmsgCollector::collect over a memfd
  fabricmanager     # collectors/fabricmanager_collector.h FabricManagerCollector::collect
  journald_json     # rules/line_time.h parse_journal_json (journald's exported fields)
  app_line          # collectors/app_output_collector.h parse_app_line (rank labels, stamps)
  prometheus_answer # collectors/prometheus_collector.h parse_prometheus_range, prometheus_line
  loki_answer       # collectors/loki_collector.h parse_loki_streams
  bundle            # rules/evidence/bundle.h open_bundle + replay_bundle (attrib-replay)
  verdict_json      # core/verdict.h verdict_from_json, core/verdict_text.h (attrib-show, the archive)
  rule_pack         # rules/engine.h load_rule_pack (manifest, rule files, catalogs)
  job_ended         # attributiond/head AttributionService::SubmitJobEnded, the queue, the spool
  hook_env          # epilog/hook_env.h job_ended_from_env
  collect_request   # attributiond/node NodeCollectService::Collect, pipeline::from_proto
  dashboard_http    # attributiond/dashboard DashboardServer over loopback HTTP
  template_miner    # rules/evidence/template_miner.h masking, clustering, rule skeletons (attrib-rules mine)
  attribute_request # attributiond/api/attribute_request.h, the API's body -> bundle v1 files
  flight_recorder_dump # collectors/flight_recorder_dump.h over pickle_reader.h (the job's dumps)
)
set(ATTRIB_FUZZ_SUPPORT_SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_support.cpp)
set(ATTRIB_FUZZ_LIBS attributiond_lib attrib_hook_env attrib_rules attrib_rules_evidence attrib_collectors attrib_common attrib_core
  nlohmann_json::nlohmann_json PkgConfig::HTTPLIB)
