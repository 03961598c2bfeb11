// Symbols that Slurm's accounting_storage/slurmdbd plugin calls but libslurm.so does not
// export: they live in libslurmfull, which only Slurm's own daemons load. The plugin is
// dlopen()ed lazily, so a missing symbol surfaces only on the path that calls it: when
// slurmdbd goes away under an open connection, the plugin names the failed request with
// slurmdbd_msg_type_2_str() and the process died with "symbol lookup error" (found by
// tests/e2e/faults/disk_full.sh, which stops slurmdbd while the sweep's connection is
// open). The executables that talk to slurmdbd export these (CMakeLists.txt), so the
// plugin's error path logs and returns like any other failed request.
#include <cstdint>

extern "C" {

// The request's name, for the plugin's error message.
__attribute__((visibility("default"))) const char* slurmdbd_msg_type_2_str(int /*msg_type*/, int /*get_enum*/) {
  return "slurmdbd request";
}

// The RPC's name, for the plugin's error message.
__attribute__((visibility("default"))) const char* rpc_num2string(uint16_t /*msg_type*/) { return "RPC"; }
}
