"""What the GPU checks share: grading a cell's reference solution (kit.answers.reference) and a
few catalogue answers on the GPU (``python -m graders --gpu``, as ``autograde --gpu`` runs it)."""

from __future__ import annotations

import time


def grade_on_gpu(wrong: dict[str, list[str]], sandbox: bool) -> bool:
    """Grade, for each grade_id of ``wrong``, its reference (full marks expected) and the named wrong
    catalogue answers (less expected) on the GPU; print each verdict; True when all came out so."""
    from graders import _catalogue as catalogue
    from kit.answers import reference
    from kit.grading import grade_cell

    ok = True
    print("1. grading on the GPU (python -m graders --gpu)")
    for gid, names in wrong.items():
        cases = [("reference", reference(gid), True)]
        for name in names:
            cases.append((name, catalogue.source(gid, name), False))
        for name, src, should_pass in cases:
            t0 = time.perf_counter()
            v = grade_cell(gid, src, gpu=True, sandbox=sandbox)
            dt = time.perf_counter() - t0
            got = sum(r["points"] for r in v.results)
            total = sum(r["max_points"] for r in v.results)
            right = (got == total) if should_pass else (got < total)
            ok &= right
            print(
                f"   {'ok ' if right else 'BAD'} {gid}/{name}: {got:g}/{total:g} in {dt:.1f} s"
                + (f"  [{v.problem}]" if v.problem else "")
            )
            for r in v.results:
                if not r["passed"]:
                    print(f"        {r['test']}: {r['message'].splitlines()[0][:160]}")
    return ok
