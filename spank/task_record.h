// One task's record as the plugin writes it: identity, times and the decoded exit.
//
// The record file <spool>/<job>/<step>.<rank>.json holds JSON lines: a task_start line
// (written when the task has been forked) and, once the task has ended, a task_exit
// line. The file is always replaced as a whole (see record_file.h), so a reader sees
// either the start line alone or both. The format is docs/collectors.md "spank_records".
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace attrib::spank {

// Slurm's special step ids (slurm.h: SLURM_BATCH_SCRIPT, SLURM_EXTERN_CONT, ...).
inline constexpr uint32_t kBatchStep = 0xfffffffb;        // 4294967291
inline constexpr uint32_t kExternStep = 0xfffffffc;       // 4294967292
inline constexpr uint32_t kInteractiveStep = 0xfffffffa;  // 4294967290

// "batch", "extern", "interactive" or the decimal step number: the same names sacct uses.
std::string step_label(uint32_t step_id);

struct ExitStatus {
  int exit_code = 0;  // WEXITSTATUS, or 0 when a signal ended the task (Slurm's "0:9")
  int signal = 0;     // WTERMSIG, or 0 when the task exited
  bool core_dumped = false;
  bool abnormal() const { return exit_code != 0 || signal != 0; }
};

// Decodes a raw wait(2) status as S_TASK_EXIT_STATUS hands it over.
ExitStatus decode_wait_status(int raw_status);

struct TaskRecord {
  uint32_t job_id = 0;
  uint32_t step_id = 0;
  std::string node;
  uint32_t global_rank = 0;
  int local_rank = 0;
  int64_t pid = 0;
  int64_t start_us = 0;           // wall clock when the task had been forked
  std::optional<int64_t> end_us;  // set once the task has ended
  int raw_status = 0;             // meaningful only with end_us
  // The GPU indices Slurm gave the step on this node (SLURM_STEP_GPUS, else
  // SLURM_JOB_GPUS: "0,1"), "" without GPUs: what the engine checks an Xid's GPU against.
  std::string gpus;
};

// <step>.<rank>.json
std::string record_file_name(uint32_t step_id, uint32_t global_rank);

// The file's content: the start line, and the exit line when end_us is set.
std::string record_text(const TaskRecord& record);

// JSON string literal (with quotes) for arbitrary bytes: ", \ and control characters
// escaped; bytes >= 0x80 pass through (node names are ASCII in practice, and a reader
// with a strict UTF-8 parser then reports the record instead of guessing).
std::string json_string(const std::string& text);

}  // namespace attrib::spank
