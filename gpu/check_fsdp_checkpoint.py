"""GPU check of notebook 05: fsdp_checkpoint on CUDA with NCCL.

On a machine with a CUDA GPU and NCCL:
1. grades the notebook's reference solution and two wrong answers from the catalogue with the
   GPU path of the grader (`python -m graders --gpu`, via kit.grading.grade_cell as autograde
   --gpu runs it): the reference must get full marks, the wrong ones must not. Every rank is a
   thread with its own NCCL process group on GPU `rank`; world sizes are capped at the number of
   GPUs, so with one GPU everything runs at world size 1 (then the missing-barrier and
   every-rank-writes answers cannot fail, and the wrong answers graded are two that fail at any
   size; with 2+ GPUs the missing barrier is graded too);
2. prints figures: the time to grade each answer, and a save/load round trip of a bigger model
   (8 Linear layers of 2048x2048, ~34M float32 parameters, FULL_STATE_DICT with
   offload_to_cpu=True and rank0_only, the usual GPU recipe) at the largest world size: save
   and load seconds, file size, and whether the reloaded parameters are bit-identical.
Without a GPU it prints "no GPU: skipped" and returns 0.

    .venv/bin/python gpu/check_fsdp_checkpoint.py [--no-sandbox] [--skip-grading]
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

from gpu.common import check_main, grade_on_gpu, nccl_ready
from kit import source_ch13lib

source_ch13lib()  # this check imports the pristine copy beside the notebooks

GID = "fsdp_checkpoint"
WRONG_ANY_SIZE = ["wrong_raw_sharded_optim", "wrong_no_optim_state"]
WRONG_MULTI_GPU = ["wrong_no_barrier"]


def grade(args) -> bool:
    import torch

    n_gpus = torch.cuda.device_count()
    wrong = WRONG_ANY_SIZE + (WRONG_MULTI_GPU if n_gpus >= 2 else [])
    return grade_on_gpu(
        {GID: wrong}, sandbox=not args.no_sandbox, note=f"{n_gpus} GPU(s): world sizes capped at {n_gpus}"
    )


def figures(_args=None) -> bool:
    import torch
    import torch.distributed as dist
    from torch import nn
    from torch.distributed.fsdp import FullStateDictConfig, StateDictType
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

    from ch13lib.fsdp_world import run_world

    world = torch.cuda.device_count()
    d = tempfile.mkdtemp(prefix="fsdp-gpu-")
    path = os.path.join(d, "big.pt")
    print(f"2. figures: save/load of 8 x Linear(2048, 2048) at world size {world} (NCCL)")

    def make():
        torch.manual_seed(0)
        return nn.Sequential(*[nn.Linear(2048, 2048) for _ in range(8)])

    def fn(w):
        rank = dist.get_rank()
        dev = torch.device("cuda", torch.cuda.current_device())
        model = FSDP(make().to(dev), device_id=dev)
        w.sync()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        cfg = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
        with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, cfg):
            sd = model.state_dict()
        if rank == 0:
            torch.save(sd, path)
        dist.barrier()
        t_save = time.perf_counter() - t0
        fresh = FSDP(nn.Sequential(*[nn.Linear(2048, 2048) for _ in range(8)]).to(dev), device_id=dev)
        w.sync()
        t0 = time.perf_counter()
        cfg = FullStateDictConfig(offload_to_cpu=True, rank0_only=False)
        with FSDP.state_dict_type(fresh, StateDictType.FULL_STATE_DICT, cfg):
            fresh.load_state_dict(torch.load(path, map_location="cpu"))
        torch.cuda.synchronize()
        t_load = time.perf_counter() - t0
        with FSDP.summon_full_params(fresh, writeback=False), FSDP.summon_full_params(model, writeback=False):
            same = all(torch.equal(a, b) for a, b in zip(fresh.parameters(), model.parameters()))
        n = sum(p.numel() for p in make().parameters())
        return t_save, t_load, same, n

    results = run_world(world, fn, backend="nccl", guard_s=300)
    t_save, t_load, same, n = results[0]
    size = os.path.getsize(path) / 1e6
    print(
        f"   {n / 1e6:.1f}M parameters, file {size:.0f} MB; save {t_save:.2f} s, load {t_load:.2f} s "
        f"(rank 0); reloaded parameters {'bit-identical' if all(r[2] for r in results) else 'DIFFERENT'}"
    )
    return all(r[2] for r in results)


def main(argv=None) -> int:
    return check_main(argv, ready=nccl_ready, grade=grade, figures=figures)


if __name__ == "__main__":
    sys.exit(main())
