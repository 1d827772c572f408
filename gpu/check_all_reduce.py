"""GPU check of notebook 03: all_reduce, ddp_average and rs_ag_all_reduce on NCCL.

On a machine with a CUDA GPU:
1. grades, for each of the three grade_ids, the notebook's reference solution and two wrong
   answers from the catalogue with the GPU path of the graders (`python -m graders --gpu`, as
   autograde --gpu runs it): gloo as on CPU, plus NCCL with one rank per GPU (at most 4) and the
   simulator on CUDA tensors. With a single GPU NCCL can only run world size 1 (NCCL refuses two
   ranks on one device), so the multi-rank GPU coverage is the simulator's;
2. prints figures: the reference ring against `dist.all_reduce` on NCCL, in a world of every GPU
   there is (one rank per GPU), for a 64 MiB float32 tensor: time per call and algorithm bandwidth
   (bytes / time), results checked; on one GPU, world size 1, which measures only call overhead.
Without a GPU it prints "no GPU: skipped" and returns 0.

    .venv/bin/python gpu/check_all_reduce.py [--no-sandbox] [--skip-grading] [--mib 64]
"""

from __future__ import annotations

import sys

from gpu.common import check_main, grade_on_gpu, nccl_ready
from kit import ROOT, source_ch13lib
from kit.answers import reference

source_ch13lib()  # this check imports the pristine copy beside the notebooks

WRONG = {  # two realistic wrong answers per exercise, graded on the GPU
    "all_reduce": ["wrong_gather_broadcast", "wrong_blocking_send_then_recv"],
    "ddp_average": ["wrong_sum_not_mean", "wrong_clone_discarded"],
    "rs_ag_all_reduce": ["wrong_no_padding", "wrong_gather_everything"],
}


RANK_API = ("bench_rank",)  # run by the ranks of a launched world (ch13lib.collective_launch)


def bench_rank(payload: dict) -> dict:
    """collective_launch target: time the reference ring and dist.all_reduce on this rank's GPU."""
    import torch
    import torch.distributed as dist

    from ch13lib.collective_launch import DistComm, load_source

    rank, world = dist.get_rank(), dist.get_world_size()
    ring = load_source(payload["source"], "bench_ring").ring_all_reduce
    n = payload["mib"] * 2**20 // 4
    x = torch.full((n,), float(rank + 1), device="cuda")
    want = world * (world + 1) / 2
    comm = DistComm(dist.group.WORLD, list(range(world)), "cuda")
    out = {}
    for name, fn in [
        ("dist.all_reduce (NCCL)", lambda t: dist.all_reduce(t)),
        ("reference ring_all_reduce", lambda t: ring(t, comm)),
    ]:
        times = []
        for _ in range(6):
            t = x.clone()
            dist.barrier()
            torch.cuda.synchronize()
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn(t)
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop) / 1e3)
        out[name] = {"s": sorted(times[1:])[len(times[1:]) // 2], "ok": bool((t == want).all())}
    return out


def figures(mib: int) -> bool:
    import torch

    from ch13lib.collective_launch import launch

    world = torch.cuda.device_count()
    print(f"2. figures: {world} GPU rank(s) on NCCL ({torch.cuda.get_device_name(0)}), {mib} MiB float32")
    res = launch(
        world,
        "gpu.check_all_reduce:bench_rank",
        {"source": reference("all_reduce"), "mib": mib},
        backend="nccl",
        hard_timeout_s=120,
        extra_path=(ROOT,),
    )
    ok = True
    for r, out in enumerate(res):
        if "error" in out:
            print(f"   rank {r}: {out['error']}")
            return False
    for name in res[0]:
        s = max(out[name]["s"] for out in res)
        good = all(out[name]["ok"] for out in res)
        ok &= good
        print(
            f"   {name:<28}: {s * 1e3:9.3f} ms  {mib / 1024 / s:8.2f} GiB/s algorithm bandwidth; "
            f"result {'exact' if good else 'WRONG'}"
        )
    if world == 1:
        print("   (one GPU: world size 1 moves no data; these are call overheads only)")
    return ok


def main(argv=None) -> int:
    return check_main(
        argv,
        ready=nccl_ready,
        grade=lambda args: grade_on_gpu(WRONG, sandbox=not args.no_sandbox),
        figures=lambda args: figures(args.mib),
        options=lambda ap: ap.add_argument("--mib", type=int, default=64),
    )


if __name__ == "__main__":
    sys.exit(main())
