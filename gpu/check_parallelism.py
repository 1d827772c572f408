"""GPU check of notebook 07: pipeline, tensor_parallel and zero1 on NCCL.

On a machine with a CUDA GPU:
1. grades, for each of the three grade_ids, the notebook's reference solution and two wrong
   answers from the catalogue with the GPU path of the graders (`python -m graders --gpu`, as
   autograde --gpu runs it): gloo as on CPU, plus an NCCL world with one rank per GPU (at most 4)
   on CUDA tensors for the cases that fit it. With a single GPU NCCL runs world size 1 only (NCCL
   refuses two ranks on one device), so the multi-rank GPU coverage is the simulator's and gloo's;
2. prints figures from one NCCL world of every GPU there is (one rank per GPU): the reference
   tp_mlp against the unsharded MLP on CUDA (time per call, largest difference), one ZeroAdam step
   against torch.optim.Adam on a 1M-parameter float32 model (time, largest difference), and one
   gpipe_step with P = the number of GPUs against the full-batch gradient.
Without a GPU it prints "no GPU: skipped" and returns 0.

    .venv/bin/python gpu/check_parallelism.py [--no-sandbox] [--skip-grading]
"""

from __future__ import annotations

import sys

from gpu.common import check_main, grade_on_gpu, nccl_ready
from kit import ROOT, source_ch13lib
from kit.answers import reference

source_ch13lib()  # this check imports the pristine copy beside the notebooks

GRADE_IDS = ["pipeline", "tensor_parallel", "zero1"]
WRONG = {  # two realistic wrong answers per exercise, graded on the GPU
    "pipeline": ["wrong_sequential_microbatches", "wrong_detached_activations"],
    "tensor_parallel": ["wrong_b2_every_rank", "wrong_float32_buffer"],
    "zero1": ["wrong_sum_not_mean", "wrong_all_reduce"],
}


def _timed(fn, reps: int = 5) -> float:
    import torch

    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3)
    return sorted(times[1:])[len(times[1:]) // 2]


RANK_API = ("bench_rank",)  # run by the ranks of a launched world (ch13lib.collective_launch)


def bench_rank(payload: dict) -> dict:
    """collective_launch target: the three references on this rank's GPU, against torch."""
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F

    from ch13lib.collective_launch import DistComm, load_source
    from ch13lib.parallel_cases import LOSSES, PipeCase, make_batch, make_stages, pipeline_reference

    rank, world = dist.get_rank(), dist.get_world_size()
    comm = DistComm(dist.group.WORLD, list(range(world)), "cuda")
    out = {}
    # tensor parallelism: a 4096-wide MLP, hidden 4·4096 split over the ranks
    tp = load_source(payload["tensor_parallel"], "bench_tp").tp_mlp
    g = torch.Generator(device="cuda").manual_seed(0)
    d, h = 4096, 4 * 4096
    x = torch.randn(512, d, device="cuda", generator=g)
    W1 = torch.randn(d, h, device="cuda", generator=g) / d**0.5
    B1 = torch.randn(h, device="cuda", generator=g)
    W2 = torch.randn(h, d, device="cuda", generator=g) / h**0.5
    b2 = torch.randn(d, device="cuda", generator=g)
    c = slice(rank * h // world, (rank + 1) * h // world)
    w1, bb1, w2 = W1[:, c].contiguous(), B1[c].contiguous(), W2[c, :].contiguous()
    y = tp(x, w1, bb1, w2, b2, comm)
    full = F.gelu(x @ W1 + B1) @ W2 + b2
    out["tp_mlp"] = {
        "s": _timed(lambda: tp(x, w1, bb1, w2, b2, comm)),
        "unsharded_s": _timed(lambda: F.gelu(x @ W1 + B1) @ W2 + b2),
        "max_diff": float((y - full).abs().max()),
        "allclose": bool(torch.allclose(y, full, rtol=1e-4, atol=1e-4)),
    }
    # ZeRO-1: one step on 1M float32 parameters against torch.optim.Adam with the averaged gradient
    Z = load_source(payload["zero1"], "bench_zero").ZeroAdam
    torch.manual_seed(1)
    init = [torch.randn(1000, 1000, device="cuda"), torch.randn(999, device="cuda")]
    grads = [[torch.randn_like(t) for t in init] for _ in range(world)]
    mine = [torch.nn.Parameter(t.clone()) for t in init]
    ref = [torch.nn.Parameter(t.clone()) for t in init]
    opt, adam = Z(mine, comm, lr=1e-3), torch.optim.Adam(ref, lr=1e-3)
    for p, gr in zip(mine, grads[rank]):
        p.grad = gr.clone()
    out["ZeroAdam"] = {"s": _timed(opt.step, reps=1)}
    for i, p in enumerate(ref):
        p.grad = sum(gs[i] for gs in grads) / world
    adam.step()
    out["ZeroAdam"]["max_diff"] = max(float((a - b).abs().max()) for a, b in zip(mine, ref))
    out["ZeroAdam"]["state_numel"] = opt.state_numel()
    # the pipeline: P = world stages on CUDA, compared with the full-batch step
    gp = load_source(payload["pipeline"], "bench_pipe").gpipe_step
    case = PipeCase(world, 8, 4, (64,) * (world + 1), "mse", 3)
    stage = make_stages(case, device="cuda")[rank]
    batch, target = make_batch(case, "cuda")
    loss = gp(stage, batch if rank == 0 else None, target if rank == world - 1 else None, 8, comm, LOSSES[case.loss])
    want = pipeline_reference(case)
    got = [p.grad.double().cpu().reshape(-1) for p in stage.parameters()]
    out["gpipe_step"] = {
        "max_diff": max(float((a - b).abs().max()) for a, b in zip(got, want["grads"][rank])),
        "loss": loss,
        "want_loss": want["loss"],
    }
    return out


def figures() -> bool:
    import torch

    from ch13lib.collective_launch import launch

    world = min(torch.cuda.device_count(), 8)
    print(f"2. figures: {world} GPU rank(s) on NCCL ({torch.cuda.get_device_name(0)})")
    res = launch(
        world,
        "gpu.check_parallelism:bench_rank",
        {gid: reference(gid) for gid in GRADE_IDS},
        backend="nccl",
        hard_timeout_s=180,
        extra_path=(ROOT,),
    )
    for r, out in enumerate(res):
        if "error" in out:
            print(f"   rank {r}: {out['error']}")
            return False
    tp, zero, pipe = res[0]["tp_mlp"], res[0]["ZeroAdam"], res[-1]["gpipe_step"]
    print(
        f"   tp_mlp (512×4096, hidden 16384 over {world}): {tp['s'] * 1e3:.2f} ms per call, unsharded "
        f"{tp['unsharded_s'] * 1e3:.2f} ms; largest difference {tp['max_diff']:.2e} (TF32 matmuls may differ)"
    )
    print(
        f"   ZeroAdam step (1,000,999 float32 parameters): {zero['s'] * 1e3:.2f} ms; state {zero['state_numel']} "
        f"elements per rank; largest difference from torch.optim.Adam {zero['max_diff']:.2e}"
    )
    print(
        f"   gpipe_step (P = {world}, m = 8): largest gradient difference {pipe['max_diff']:.2e}; loss "
        f"{pipe['loss']:.6f} (full batch {pipe['want_loss']:.6f})"
    )
    ok = zero["max_diff"] < 1e-5 and pipe["max_diff"] < 1e-3 and abs(pipe["loss"] - pipe["want_loss"]) < 1e-3
    return ok and all(r["tp_mlp"]["max_diff"] < 5e-2 for r in res)


def main(argv=None) -> int:
    return check_main(
        argv,
        ready=nccl_ready,
        grade=lambda args: grade_on_gpu(WRONG, sandbox=not args.no_sandbox),
        figures=lambda args: figures(),
    )


if __name__ == "__main__":
    sys.exit(main())
