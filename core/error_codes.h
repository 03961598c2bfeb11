// Every stable error code attrib returns (attrib::Error::code), in one table: the code,
// what kind of failure it is, and what it means. The kind decides the gRPC status a
// service answers with (common/grpc_status.h is the one mapping) and whether a retry can
// help. Codes are grep-able in logs and docs; tests/layout checks that every code the
// source uses is listed here.
#pragma once

#include <string_view>

namespace attrib {

enum class ErrorKind {
  InvalidArgument,     // the input is wrong; the same request fails again
  NotFound,            // nothing by that name (yet)
  PermissionDenied,    // who is asking may not do this
  Unauthenticated,     // who is asking could not be established
  Unavailable,         // a dependency (slurmdbd, munged, the disk) failed: retry later
  FailedPrecondition,  // the request reached the wrong place or state
  Internal,            // a bug or corrupt state
  ResourceExhausted,   // over a size or rate limit: smaller, or later
};

// X(constant, code, kind, meaning)
#define ATTRIB_ERROR_CODES(X)                                                                                    \
  X(kApiRequest, "API_E_REQUEST", InvalidArgument, "an attribution API request is malformed (the field is named)") \
  X(kApiTooLarge, "API_E_TOO_LARGE", ResourceExhausted, "an attribution API request is over api.max_* limits")   \
  X(kApiRate, "API_E_RATE", ResourceExhausted, "the caller is over api.rate_per_minute; retry later")            \
  X(kApiCluster, "API_E_CLUSTER", InvalidArgument, "the attribution API cannot judge the daemon's Slurm cluster") \
  X(kAuthMissing, "AUTH_E_MISSING", Unauthenticated, "no MUNGE credential in the request")                       \
  X(kAuthInvalid, "AUTH_E_INVALID", Unauthenticated, "not a credential of this cluster's MUNGE key")             \
  X(kAuthExpired, "AUTH_E_EXPIRED", Unauthenticated, "the credential is older than its time-to-live")            \
  X(kAuthReplayed, "AUTH_E_REPLAYED", Unauthenticated, "the credential was already used once")                   \
  X(kAuthMismatch, "AUTH_E_MISMATCH", Unauthenticated, "the credential was made for another method or body")     \
  X(kAuthDenied, "AUTH_E_DENIED", PermissionDenied, "a valid caller whose uid may not do this")                  \
  X(kAuthMunged, "AUTH_E_MUNGED", Unavailable, "munged is unreachable or failing (not the caller's fault)")      \
  X(kAuthConfig, "AUTH_E_CONFIG", Unavailable, "auth.slurm_user or auth.admin_group cannot be resolved")         \
  X(kBundleExport, "BUNDLE_E_EXPORT", Unavailable, "an evidence bundle cannot be written")                       \
  X(kBundleHost, "BUNDLE_E_HOST", InvalidArgument, "a bundle's host directory holds something other than logs")  \
  X(kBundleIo, "BUNDLE_E_IO", InvalidArgument, "a bundle file cannot be read")                                   \
  X(kBundleJob, "BUNDLE_E_JOB", InvalidArgument, "a bundle's job.json field is missing or wrong")                \
  X(kBundleJson, "BUNDLE_E_JSON", InvalidArgument, "a bundle's JSON line is malformed")                          \
  X(kBundlePack, "BUNDLE_E_PACK", Internal, "replay without a rule pack")                                        \
  X(kBundleSource, "BUNDLE_E_SOURCE", InvalidArgument, "a bundle file names no known source")                    \
  X(kCollectBootTime, "COLLECT_E_BOOT_TIME", Unavailable, "a node's boot time cannot be read")                   \
  X(kCollectDump, "COLLECT_E_DUMP", InvalidArgument, "a flight-recorder dump cannot be read as data")             \
  X(kCollectJournal, "COLLECT_E_JOURNAL", Unavailable, "sd-journal failed")                                      \
  X(kCollectPath, "COLLECT_E_PATH", InvalidArgument, "a path template cannot be expanded safely")                \
  X(kCollectWrongNode, "COLLECT_E_WRONG_NODE", FailedPrecondition, "a node agent was asked for another node")    \
  X(kCommentVerify, "COMMENT_E_VERIFY", Unavailable, "slurmdbd did not keep the written Comment")                \
  X(kConfigInternal, "CONFIG_E_INTERNAL", Internal, "an option table is inconsistent with its reader")           \
  X(kConfigOpen, "CONFIG_E_OPEN", InvalidArgument, "the configuration file cannot be read")                      \
  X(kConfigRequired, "CONFIG_E_REQUIRED", InvalidArgument, "a required configuration key is missing")            \
  X(kConfigType, "CONFIG_E_TYPE", InvalidArgument, "a configuration value has the wrong type")                   \
  X(kConfigUnknownCollector, "CONFIG_E_UNKNOWN_COLLECTOR", InvalidArgument, "no collector of that kind")         \
  X(kConfigUnknownKey, "CONFIG_E_UNKNOWN_KEY", InvalidArgument, "a configuration key that is not declared")      \
  X(kConfigValue, "CONFIG_E_VALUE", InvalidArgument, "a configuration value of the right type but unusable")     \
  X(kConfigYaml, "CONFIG_E_YAML", InvalidArgument, "the configuration file is not valid YAML")                   \
  X(kDashConfig, "DASH_E_CONFIG", Internal, "the dashboard was started without what it needs")                   \
  X(kDashForbidden, "DASH_E_FORBIDDEN", PermissionDenied, "the job exists but is not the viewer's")              \
  X(kDashRandom, "DASH_E_RANDOM", Unavailable, "no randomness for a session token")                              \
  X(kCorpusIncident, "CORPUS_E_INCIDENT", InvalidArgument, "a corpus incident's incident.json is wrong")     \
  X(kDashRange, "DASH_E_RANGE", InvalidArgument, "a time range ends before it starts")                           \
  X(kDbDecode, "DB_E_DECODE", Internal, "a stored row cannot be decoded")                                        \
  X(kDbExec, "DB_E_EXEC", Unavailable, "an SQLite statement failed")                                             \
  X(kDbMigrate, "DB_E_MIGRATE", Unavailable, "the archive schema cannot be migrated")                            \
  X(kDbOpen, "DB_E_OPEN", Unavailable, "the SQLite file cannot be opened")                                       \
  X(kDbSchemaNotCurrent, "DB_E_SCHEMA", FailedPrecondition,                                                      \
    "the archive's schema is not this tool's, and a tool never migrates it")                                     \
  X(kDbPrepare, "DB_E_PREPARE", Internal, "an SQL statement cannot be prepared")                                 \
  X(kDbStep, "DB_E_STEP", Unavailable, "an SQLite query failed while running")                                   \
  X(kDbTransaction, "DB_E_TX", Unavailable, "a transaction did not begin or commit")                             \
  X(kDrainNoNode, "DRAIN_E_NO_NODE", NotFound, "slurmctld knows no such node")                                   \
  X(kDrainSlurmctld, "DRAIN_E_SLURMCTLD", Unavailable, "slurmctld refused or failed a node read or update")      \
  X(kEpilogEnv, "EPILOG_E_ENV", InvalidArgument, "the hook was not run by Slurm (no job id in the environment)") \
  X(kEvidenceUnpack, "EVIDENCE_E_UNPACK", Internal, "an archived evidence blob is damaged")                      \
  X(kGoldenExpected, "GOLDEN_E_EXPECTED", InvalidArgument, "a golden fixture's expected.json is wrong")          \
  X(kHttpTimeout, "HTTP_E_TIMEOUT", Unavailable, "an HTTP request to a central store timed out")                 \
  X(kHttpTransport, "HTTP_E_TRANSPORT", Unavailable, "an HTTP request to a central store failed")                \
  X(kListenAddress, "LISTEN_E_ADDRESS", InvalidArgument, "a listen address is not host:port")                    \
  X(kListenBind, "LISTEN_E_BIND", Unavailable, "a listen address cannot be bound")                               \
  X(kListenDir, "LISTEN_E_DIR", Unavailable, "a Unix socket's directory cannot be created")                      \
  X(kLokiError, "LOKI_E_ERROR", Unavailable, "Loki answered with an error")                                      \
  X(kLokiFormat, "LOKI_E_FORMAT", Unavailable, "Loki's answer is not what its API documents")                    \
  X(kPromError, "PROM_E_ERROR", Unavailable, "Prometheus answered with an error")                                \
  X(kPromFormat, "PROM_E_FORMAT", Unavailable, "Prometheus' answer is not what its API documents")               \
  X(kPromTimeout, "PROM_E_TIMEOUT", Unavailable, "a Prometheus query timed out")                                 \
  X(kQueueDecode, "QUEUE_E_DECODE", Internal, "a queued request cannot be decoded")                              \
  X(kQueueEncode, "QUEUE_E_ENCODE", Internal, "a request cannot be encoded for the queue")                       \
  X(kQueueSameAttempt, "QUEUE_E_SAME_ATTEMPT", FailedPrecondition,                                                    \
    "another run of the job id was archived on the same attempt first: this run was dropped")                    \
  X(kRequestInvalid, "REQUEST_E_INVALID", InvalidArgument, "an RPC request is malformed")                        \
  X(kRuleCatalog, "RULE_E_CATALOG", InvalidArgument, "a rule pack data table is malformed or unmappable")        \
  X(kRuleDuplicate, "RULE_E_DUPLICATE", InvalidArgument, "two rules share an id")                                \
  X(kRuleExample, "RULE_E_EXAMPLE", InvalidArgument, "a rule's inline example fails")                            \
  X(kRuleField, "RULE_E_FIELD", InvalidArgument, "a rule key or value is missing, unknown or invalid")           \
  X(kRuleIo, "RULE_E_IO", InvalidArgument, "a rule file cannot be read")                                         \
  X(kRuleOverride, "RULE_E_OVERRIDE", InvalidArgument, "a site rule replaces a shipped one without override")    \
  X(kRuleRef, "RULE_E_REF", InvalidArgument, "a rule refers to an unknown kind or catalog")                      \
  X(kRuleRegex, "RULE_E_REGEX", InvalidArgument, "a rule's regex does not compile")                              \
  X(kRuleTemplate, "RULE_E_TEMPLATE", InvalidArgument, "a summary names an unknown placeholder")                 \
  X(kRuleTrust, "RULE_E_TRUST", InvalidArgument, "a hardware root cause without trusted evidence")               \
  X(kRuleYaml, "RULE_E_YAML", InvalidArgument, "a rule file is not valid YAML")                                  \
  X(kSlurmctldConfig, "SLURM_E_CTL_CONFIG", Unavailable, "slurmctld did not answer with its configuration or nodes") \
  X(kSlurmdbBadJobId, "SLURMDB_E_BAD_JOB_ID", InvalidArgument, "not a job id of the form N, N_T or N+O")         \
  X(kSlurmdbConnection, "SLURMDB_E_CONNECTION", Unavailable, "slurmdbd is unreachable or refused")               \
  X(kSlurmdbNotFound, "SLURMDB_E_NOT_FOUND", NotFound, "slurmdbd has no record of the job (yet)")                \
  X(kSlurmdbQuery, "SLURMDB_E_QUERY", Unavailable, "a slurmdbd request failed")                                  \
  X(kSinkIo, "SINK_E_IO", Unavailable, "a verdict sink cannot write its file or spool")                         \
  X(kSinkConfig, "SINK_E_CONFIG", InvalidArgument, "a verdict sink's configuration is unusable")               \
  X(kSpankArg, "SPANK_E_ARG", InvalidArgument, "a plugstack.conf argument of the SPANK plugin is wrong")         \
  X(kSpankIo, "SPANK_E_IO", Unavailable, "the SPANK plugin cannot write its task record")                        \
  X(kSpoolDecode, "SPOOL_E_DECODE", Internal, "a spool file cannot be decoded")                                  \
  X(kSpoolEncode, "SPOOL_E_ENCODE", Internal, "a job cannot be encoded for the spool")                           \
  X(kSpoolIo, "SPOOL_E_IO", Unavailable, "the spool directory cannot be written or read")                        \
  X(kSubmitInvalid, "SUBMIT_E_INVALID", InvalidArgument,                                                         \
    "a JobEnded without a job id, or whose node list is not a hostlist")                                         \
  X(kTimeSpec, "TIME_E_SPEC", InvalidArgument, "not a relative age or an ISO 8601 time")                         \
  X(kVerdictField, "VERDICT_E_FIELD", InvalidArgument, "a verdict v1 field is missing or of the wrong type")     \
  X(kVerdictForbidden, "VERDICT_E_FORBIDDEN", PermissionDenied, "another user's job's verdict")                  \
  X(kVerdictJson, "VERDICT_E_JSON", InvalidArgument, "a verdict is not valid JSON")                              \
  X(kVerdictNotFound, "VERDICT_E_NOT_FOUND", NotFound, "no job by that id in the archive")                       \
  X(kVerdictSchema, "VERDICT_E_SCHEMA", InvalidArgument, "a verdict of an unsupported schema")

#define ATTRIB_DECLARE_ERROR_CODE(constant, code, kind, meaning) inline constexpr const char* constant = code;
ATTRIB_ERROR_CODES(ATTRIB_DECLARE_ERROR_CODE)
#undef ATTRIB_DECLARE_ERROR_CODE

struct ErrorCodeInfo {
  std::string_view code;
  ErrorKind kind;
  std::string_view meaning;
};

// The whole table, in the order above.
#define ATTRIB_ERROR_CODE_INFO(constant, code, kind, meaning) ErrorCodeInfo{code, ErrorKind::kind, meaning},
inline constexpr ErrorCodeInfo kErrorCodes[] = {ATTRIB_ERROR_CODES(ATTRIB_ERROR_CODE_INFO)};
#undef ATTRIB_ERROR_CODE_INFO

// The kind of `code`; Internal for a code missing from the table.
constexpr ErrorKind error_kind(std::string_view code) {
  for (const ErrorCodeInfo& info : kErrorCodes)
    if (info.code == code) return info.kind;
  return ErrorKind::Internal;
}

}  // namespace attrib
