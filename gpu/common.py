"""What the GPU checks share: their command line and skip (``check_main``), whether torch reaches
CUDA and NCCL (``nccl_ready``), and grading a cell's reference solution (kit.answers.reference) and
a few catalogue answers on the GPU (``python -m graders --gpu``, as ``autograde --gpu`` runs it)."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable


def nccl_ready() -> str:
    """'' when torch sees a CUDA GPU and NCCL, else the reason it cannot run."""
    try:
        import torch
        import torch.distributed as dist
    except Exception as e:  # noqa: BLE001 - any import failure is a reason to skip
        return f"torch does not import ({e})"
    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    if not dist.is_nccl_available():
        return "this torch build has no NCCL"
    return ""


def check_main(
    argv,
    *,
    ready: Callable[[], str],
    grade: Callable[[argparse.Namespace], bool],
    figures: Callable[[argparse.Namespace], bool],
    options: Callable[[argparse.ArgumentParser], None] = lambda ap: None,
) -> int:
    """A GPU check's command line: ``--no-sandbox``, ``--skip-grading`` and what ``options`` adds.
    Without a GPU (``ready()`` says why) prints "no GPU: skipped (why)" and returns 0; else grades
    (unless --skip-grading), prints the figures, and returns 0 when both came out right."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-sandbox", action="store_true")
    ap.add_argument("--skip-grading", action="store_true")
    options(ap)
    args = ap.parse_args(argv)
    why = ready()
    if why:
        print(f"no GPU: skipped ({why})")
        return 0
    ok = True
    if not args.skip_grading:
        ok &= grade(args)
    ok &= figures(args)
    print("GPU check " + ("passed" if ok else "FAILED"))
    return 0 if ok else 1


def grade_on_gpu(wrong: dict[str, list[str]], sandbox: bool, note: str = "") -> bool:
    """Grade, for each grade_id of ``wrong``, its reference (full marks expected) and the named wrong
    catalogue answers (less expected) on the GPU; print each verdict; True when all came out so."""
    from graders import _catalogue as catalogue
    from kit.answers import reference
    from kit.grading import grade_cell

    ok = True
    print("1. grading on the GPU (python -m graders --gpu)" + (f", {note}" if note else ""))
    for gid, names in wrong.items():
        cases = [("reference", reference(gid), True)]
        for name in names:
            cases.append((name, catalogue.source(gid, name), False))
        for name, src, should_pass in cases:
            t0 = time.perf_counter()
            v = grade_cell(gid, src, gpu=True, sandbox=sandbox)
            dt = time.perf_counter() - t0
            got, total = v.score, v.max_score
            right = (got == total) if should_pass else (got < total)
            ok &= right
            print(
                f"   {'ok ' if right else 'BAD'} {gid}/{name}: {got:g}/{total:g} in {dt:.1f} s"
                + (f"  [{v.problem}]" if v.problem else "")
            )
            for r in v.results:
                if not r.passed:
                    print(f"        {r.test}: {r.message.splitlines()[0][:160]}")
    return ok
