"""Grade an answer cell's source in this process with its grader (``graders.load_grader``): no
nbgrader, no judge process; what a notebook's own tests use to read one grader's results."""

from __future__ import annotations

import pytest
import torch

import graders
from graders._catalogue import source


def grade(grade_id: str, src: str, gpu: bool = False) -> list:
    return list(graders.load_grader(grade_id).run(src, gpu=gpu))


def report(results) -> str:
    return "\n".join(f"[{r.test}] {r.points:g}/{r.max_points:g} {r.message} {r.example}" for r in results)


def references_pass_on_the_gpu(grade_ids) -> None:
    """On a GPU runner: each grade_id's reference gets full marks with NCCL on CUDA tensors in the
    grade; skipped without a CUDA GPU."""
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU on this machine")
    for gid in grade_ids:
        results = grade(gid, source(gid, "right_reference"), gpu=True)
        assert all(r.passed for r in results), report(results)
