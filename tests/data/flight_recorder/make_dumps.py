# Makes the flight-recorder dumps in this folder with a real PyTorch (Debian's
# python3-torch, CPU build): four ranks on the Gloo backend, whose flight recorder is the
# same as NCCL's (torch/csrc/distributed/c10d/FlightRecorder*.hpp), run all_reduce
# together; before the fourth, rank 2 stops (a hung rank) and the others time out in it.
# Each rank then writes what torch._C._distributed_c10d._dump_fr_trace() returns (the
# pickle ProcessGroupNCCL writes on a timeout) to <prefix><rank>, the name
# DebugInfoWriter gives it, and the JSON form (_dump_fr_trace_json) beside it.
#   python3 make_dumps.py OUTDIR
import datetime, os, sys, time
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch._C._distributed_c10d as c10d

HUNG_RANK, WORLD, ROUNDS = 2, 4, 4


def dump(out, rank):
    with open(os.path.join(out, "pickle", f"nccl_trace_rank_{rank}"), "wb") as f:
        f.write(c10d._dump_fr_trace())
    with open(os.path.join(out, "json", f"nccl_trace_rank_{rank}"), "wb") as f:
        f.write(c10d._dump_fr_trace_json())


def run(rank, out):
    os.environ["TORCH_NCCL_TRACE_BUFFER_SIZE"] = "2000"
    os.environ["USE_LIBUV"] = "0"  # Debian builds PyTorch without libuv
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29571?use_libuv=0", rank=rank, world_size=WORLD,
                            timeout=datetime.timedelta(seconds=4))
    t = torch.ones(1024)
    for i in range(ROUNDS):
        if rank == HUNG_RANK and i == ROUNDS - 1:
            time.sleep(8)  # never joins the last all_reduce in time
            dump(out, rank)
            os._exit(0)
        try:
            dist.all_reduce(t)
        except Exception as e:  # the others: the timeout in the last one
            print(f"rank {rank}: {type(e).__name__}: {str(e)[:200]}", flush=True)
            dump(out, rank)
            os._exit(1)
    dump(out, rank)


if __name__ == "__main__":
    out = sys.argv[1]
    for kind in ("pickle", "json"):
        os.makedirs(os.path.join(out, kind), exist_ok=True)
    print("torch", torch.__version__, flush=True)
    procs = [mp.get_context("spawn").Process(target=run, args=(r, out)) for r in range(WORLD)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    print("exit codes", [p.exitcode for p in procs])
