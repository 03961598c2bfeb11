// The forgery suite (docs/security.md): trusted sources carry user-chosen text (a crashing
// program's file name and comm, a task's comm in OOM, hung-task and audit lines, a step's
// name in the accounting record). Whatever a user writes there — a real hardware message
// included — the verdict must not blame hardware, the fabric, the network or storage, nor
// recommend draining, resetting or rebooting anything.
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/rule_test_support.h"

namespace attrib {
namespace {

// Real messages of each domain that acts on nodes (the pack's own examples, from public
// reports), which a user copies into a field of their own.
struct Payload {
  const char* name;
  const char* text;
  const char* source = "kernel";  // where its emitter writes it
};
const std::vector<Payload> kPayloads = {
    {"xid79_fallen_off_bus", "NVRM: Xid (PCI:0000:02:00): 79, GPU has fallen off the bus."},
    {"xid149_nvlink", "NVRM: Xid (PCI:0019:01:00): 149, NETIR Fatal XC0 i0 Link -1 (0x000fe406 0x00000000)"},
    {"xid119_gsp",
     "NVRM: Xid (PCI:0000:1b:00): 119, pid=2024380, name=nvidia-smi, Timeout after 6s of waiting for "
     "RPC response from GPU4 GSP! Expected function 103 (GSP_RM_ALLOC) (0x2081 0x4)."},
    {"edac_ue", "EDAC MC3: 1 UE memory read error on CPU_SrcID#1_MC#1_Chan#2_DIMM#0 (channel:2 slot:0)"},
    {"aer_fatal", "pcieport 0000:00:02.0: AER: Uncorrected (Fatal) error received: id=0010"},
    {"mlx5_link_down", "mlx5_core 0000:53:00.0 mlx5_3: Port: 1 Link DOWN"},
    {"lustre_evicted",
     "LustreError: 167-0: scratch-OST0004-osc-ffff8f3a2c3e9000: This client was evicted by "
     "scratch-OST0004; in progress operations using this service will fail."},
    {"mce", "mce: [Hardware Error]: CPU 0: Machine Check Exception: 5 Bank 6: be00000000800400"},
    {"kernel_panic", "Kernel panic - not syncing: Fatal exception"},
    // Pack 1.3.0's trusted reports that drain, reset or reboot.
    {"rm_init_adapter", "NVRM: GPU 0000:0a:00.0: RmInitAdapter failed! (0x24:0x72:1568)"},
    {"blk_io_error", "blk_update_request: I/O error, sdb, sector 2403408872"},
    {"bmc_sel_ecc", "Uncorrectable ECC / other uncorrectable memory error @P2-DIMMH2(CPU2) - Assertion", "syslog"},
    {"mce_panic", "Kernel panic - not syncing: Fatal machine check"},
    // Pack 1.8.0's: a process killed for touching corrupted memory, slurmstepd's
    // uncorrectable-memory banner, slurmd's spool on a full disk.
    {"memory_error_kill", "MCE: Killing python3:4242 due to hardware memory corruption fault at 7f3a2c3e9000"},
    {"slurm_uncorrectable_memory", "error: *** STEP 4242.0 ON n1 UNCORRECTABLE MEMORY ERROR AT 2026-11-30T10:02:11 ***",
     "slurm"},
    {"slurmd_spool_full", "error: creat(/var/spool/slurmd/cred_state.new): No space left on device", "slurm"},
    {"slurmd_spool_drain_reason", "SlurmdSpoolDir is full", "slurm"},
};

// The kernel's own formats that embed user text, with the user's part replaced by the
// payload ($ = the whole payload where the kernel prints a file name or path, % = its
// first 15 bytes where it prints a comm, which the kernel cuts there).
struct Vector {
  const char* name;
  const char* source;
  const char* format;
};
const std::vector<Vector> kVectors = {
    {"segfault_file", "kernel",
     "python3[4242]: segfault at 0 ip 000055cb0cc2d139 sp 00007ffe4f290af0 error 6 in $[1139,55cb0cc2d000+1000] likely "
     "on CPU 1 (core 1, socket 0)"},
    {"segfault_comm", "kernel",
     "%[4242]: segfault at 0 ip 000055cb0cc2d139 sp 00007ffe4f290af0 error 6 in a.out[55cb0cc2d000+1000]"},
    {"trap_file", "kernel",
     "traps: python3[4242] general protection fault ip:7f638b3f9967 sp:7ffe5e7434b0 error:0 in $[7f638b3f9000+14f000]"},
    {"audit_exe", "kernel",
     "audit: type=1326 audit(1732960992.123:42): auid=1000 uid=1000 gid=1000 ses=3 pid=4242 comm=\"python3\" "
     "exe=\"/home/"
     "alice/$\" sig=31 arch=c000003e syscall=41 compat=0 ip=0x7f0 code=0x0"},
    {"oom_killed_comm", "kernel",
     "Memory cgroup out of memory: Killed process 4242 (%) total-vm:93240kB, anon-rss:81200kB, file-rss:64kB"},
    {"oom_invoked_comm", "kernel", "% invoked oom-killer: gfp_mask=0x1100cca(GFP_HIGHUSER_MOVABLE), order=0"},
    {"hung_task_comm", "kernel", "INFO: task %:4242 blocked for more than 120 seconds."},
    {"oom_kill_constraint_comm", "kernel",
     "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0-1,oom_memcg=/system.slice/"
     "slurmstepd.scope/job_4242,task_memcg=/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0,task=%,"
     "pid=4242,uid=1000"},
    {"oom_kill_global_comm", "kernel",
     "oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/"
     "system.slice/slurmstepd.scope/job_4242/step_0/user/task_0,task=%,pid=4242,uid=1000"},
    {"drop_caches_comm", "kernel", "% (4242): drop_caches: 3"},
    {"rsyslog_forwarded_segfault", "syslog",
     "python3[4242]: segfault at 8 ip 00007f8eab35933c sp 00007f8e2affc8d0 error 4 in $[7f8eab324000+1a2000]"},
    {"accounting_step_name", "slurm", "step 4242.0 ($) ended FAILED exit_code=1 signal=0 on n1"},
    {"slurmd_execve_program", "slurm", "[2026-11-30T10:10:00.000] [4242.0] error: execve(): $: No such file or directory"},
};

std::string render(const char* format, const std::string& payload) {
  std::string out;
  for (const char* c = format; *c != '\0'; ++c) {
    if (*c == '$') {
      out += payload;
    } else if (*c == '%') {
      out += payload.substr(0, 15);
    } else {
      out += *c;
    }
  }
  return out;
}

const std::set<std::string> kHardwareDomains = {"GPU_HARDWARE", "GPU_DRIVER",    "NVLINK_FABRIC",
                                                "NETWORK",      "HOST_HARDWARE", "STORAGE"};
const std::set<std::string> kNodeActions = {"DRAIN_NODE", "RESET_GPU", "REBOOT_NODE", "INSPECT_FABRIC",
                                            "INSPECT_NETWORK"};

struct Case {
  std::string name;
  LogLine line;
};

std::vector<Case> forgeries() {
  std::vector<Case> cases;
  for (const Vector& vector : kVectors) {
    for (const Payload& payload : kPayloads) {
      LogLine line = test::kernel_line("n1", render(vector.format, payload.text), test::at("2026-11-30T10:10:00Z"), 0);
      line.source = vector.source;
      cases.push_back({std::string(vector.name) + "_" + payload.name, line});
    }
  }
  // The slurmctld message slurm.node_failed reads, as a step name (srun -J '...').
  LogLine step = test::kernel_line("n1",
                                   "step 4242.0 (Killing JobId=4242 on failed node n2) ended FAILED exit_code=1 "
                                   "signal=0 on n1",
                                   test::at("2026-11-30T10:10:00Z"), 0);
  step.source = "slurm";
  cases.push_back({"accounting_step_name_node_failed", step});
  // A real line: the kernel of the machine this suite was written on, after running a
  // binary named like an Xid report (the comm is its first 15 bytes).
  cases.push_back(
      {"real_kernel_segfault_of_a_binary_named_like_an_xid",
       test::kernel_line("n1",
                         "NVRM: Xid (PCI:[2601]: segfault at 0 ip 000055cb0cc2d139 sp 00007ffe4f290af0 error "
                         "6 in NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus[1139,"
                         "55cb0cc2d000+1000] likely on CPU 1 (core 1, socket 0)",
                         test::at("2026-11-30T10:10:00Z"), 0)});
  return cases;
}

TEST(Forgery, UserTextInTrustedLinesNeverBlamesHardwareNorActsOnANode) {
  const std::vector<Case> cases = forgeries();
  ASSERT_GE(cases.size(), 30u);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name + ": " + c.line.text);
    const Verdict verdict = test::attribute(test::job("FAILED", 1, {"n1", "n2"}), {c.line});
    EXPECT_EQ(kHardwareDomains.count(verdict.domain), 0u) << "domain " << verdict.domain;
    EXPECT_EQ(kNodeActions.count(verdict.recommended_action), 0u) << "action " << verdict.recommended_action;
    EXPECT_NE(verdict.domain, "SCHEDULER") << "a step name passed for slurmctld";
  }
}

TEST(Forgery, FormatsWithUserTextAreReadAsWhatTheyAre) {
  // The crash itself is the application's: a segfault or trap names the program and stays
  // APPLICATION, whatever its file is called.
  for (const char* format : {kVectors[0].format, kVectors[2].format}) {
    const Verdict verdict = test::attribute(
        test::job("FAILED", 1, {"n1"}),
        {test::kernel_line("n1", render(format, kPayloads[0].text), test::at("2026-11-30T10:10:00Z"), 0)});
    EXPECT_EQ(verdict.domain, "APPLICATION") << render(format, kPayloads[0].text);
  }
  // ... and the file name is data, captured whole.
  auto events = test::extract(
      {test::kernel_line("n1", render(kVectors[0].format, kPayloads[0].text), test::at("2026-11-30T10:10:00Z"), 0)});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, "process.segfault");
  EXPECT_EQ(events[0].fields.value("object", ""), kPayloads[0].text);
}

TEST(Forgery, TheSameMessagesFromTheirEmitterStillCount) {
  // Anchoring at the message start must not lose the real thing.
  for (const Payload& payload : kPayloads) {
    const std::string text = payload.text;
    LogLine line = test::kernel_line("n1", text, test::at("2026-11-30T10:10:00Z"), 0);
    line.source = payload.source;  // root-written either way
    auto events = test::extract({line});
    EXPECT_FALSE(events.empty()) << text;
  }
}

}  // namespace
}  // namespace attrib
