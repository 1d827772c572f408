"""Do the notebooks' public self-checks tell the truth? Run each catalogue answer through them.

    .venv/bin/python -m kit.selfchecks [GRADE_ID ...] [--jobs N] [--markdown]

For every catalogue entry (graders/catalogue/<grade_id>/{right,wrong}_*.py) this runs, in a fresh
Python process, the code cells of the answer's source notebook as a student would: the cells
before the answer cell, the entry as the answer cell (other answer cells hold their reference
solutions), then the self-check cells that follow it. Hidden test cells and other exercises'
self-checks are skipped. The self-check *flags* the entry when a cell raises, a line starts with
✘ or "…" (not answered), or the self-check call returns False.

Prints, per grade_id, how many wrong answers the self-check flags and whether a right one was
flagged (a false alarm). tests/test_selfchecks.py holds every cell to the bar: at least 90 % of the
wrong answers flagged, no right answer flagged.
"""

from __future__ import annotations

import argparse
import dataclasses
import glob
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import nbformat

from graders import _catalogue as catalogue
from kit import ASSIGNMENT, ROOT
from kit.answers import answer_cells, hidden_test_cells, reference_solutions

SOURCE = os.path.join(ROOT, "source", ASSIGNMENT)
BAR = 0.90
TIMEOUT_S = 300

RUNNER = r'''
import ast, contextlib, io, json, linecache, os, sys
sys.path.insert(0, os.environ["CH13_SELFCHECK_LIB"])
os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
cells = json.loads(sys.stdin.read())
ns = {"__name__": "__main__"}
out = io.StringIO()
flagged, why = False, ""
for i, (kind, source) in enumerate(cells):
    name = f"<ipython-input-{i}>"
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            exec(compile(tree, name, "exec"), ns)
            value = eval(compile(ast.Expression(last.value), name, "eval"), ns) if last else None
    except BaseException as e:
        if kind == "check":
            flagged, why = True, f"raised {type(e).__name__}: {e}"[:300]
        elif kind == "answer":
            pass        # a student sees the traceback; the self-check below still runs on what is defined
        else:
            print(json.dumps({"error": f"setup cell {i} raised {type(e).__name__}: {e}"[:500]}))
            sys.exit(0)
        value = None
    text = buf.getvalue()
    if kind == "check":
        out.write(text)
        lines = [l.strip() for l in text.splitlines()]
        if any(l.startswith(("✘", "…")) for l in lines):
            flagged, why = True, next(l for l in lines if l.startswith(("✘", "…")))[:300]
        if value is False or (isinstance(value, dict) and any(v is not True for v in value.values())):
            flagged, why = True, why or f"returned {value!r}"[:300]
print(json.dumps({"flagged": flagged, "why": why}))
'''


@dataclasses.dataclass
class Outcome:
    grade_id: str
    name: str
    flagged: bool
    why: str = ""
    error: str = ""

    @property
    def right(self) -> bool:
        return self.name.startswith("right_")


def notebook_of(grade_id: str) -> str:
    for path in sorted(glob.glob(os.path.join(SOURCE, "*.ipynb"))):
        if grade_id in answer_cells(nbformat.read(path, as_version=4)):
            return path
    raise KeyError(grade_id)


def cells_for(grade_id: str, answer: str) -> list[tuple[str, str]]:
    """(kind, source) of the cells a student runs to self-check ``answer``: setup, answer, check."""
    nb = nbformat.read(notebook_of(grade_id), as_version=4)
    answers = answer_cells(nb)
    tests = set(map(id, hidden_test_cells(nb).values()))
    refs = reference_solutions()
    out, seen_answer = [], False
    for cell in nb.cells:
        if cell.cell_type != "code" or id(cell) in tests:
            continue
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell in answers.values():
            if seen_answer:
                break  # the next exercise: its checks are not ours
            if gid == grade_id:
                out.append(("answer", answer))
                seen_answer = True
            else:
                out.append(("setup", refs[gid]))
            continue
        out.append(("check" if seen_answer else "setup", cell.source))
    return out


def run_entry(entry: catalogue.Entry) -> Outcome:
    grade_id, name, answer = entry.grade_id, entry.name, entry.source
    env = dict(
        os.environ,
        CH13_SELFCHECK_LIB=SOURCE,
        PYTHONHASHSEED="0",
        OMP_NUM_THREADS="1",
        RAY_AUTH_MODE="disabled",
        RAY_USAGE_STATS_ENABLED="0",
        PYTHONPATH=SOURCE,
    )
    env.pop("CH13_GRADING", None)
    try:
        proc = subprocess.run(
            [sys.executable, "-c", RUNNER],
            input=json.dumps(cells_for(grade_id, answer)),
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            cwd=SOURCE,
            env=env,
        )
        last = [line for line in proc.stdout.splitlines() if line.startswith("{")][-1:]
        data = json.loads(last[0]) if last else {"error": (proc.stderr or "no output")[-500:]}
    except subprocess.TimeoutExpired:
        data = {"flagged": True, "why": f"the self-check did not finish in {TIMEOUT_S} s"}
    return Outcome(grade_id, name, bool(data.get("flagged")), data.get("why", ""), data.get("error", ""))


def measure(grade_ids: list[str] | None = None, jobs: int = 2) -> list[Outcome]:
    todo = [e for e in catalogue.entries() if not grade_ids or e.grade_id in grade_ids]
    with ThreadPoolExecutor(jobs) as pool:
        return list(pool.map(run_entry, todo))


def table(outcomes: list[Outcome], markdown: bool = False) -> str:
    rows = []
    for gid in sorted({o.grade_id for o in outcomes}):
        mine = [o for o in outcomes if o.grade_id == gid]
        wrong = [o for o in mine if not o.right]
        caught = sum(o.flagged for o in wrong)
        alarms = [o.name for o in mine if o.right and o.flagged]
        missed = [o.name for o in wrong if not o.flagged]
        share = caught / len(wrong) if wrong else 1.0
        rows.append(
            (
                gid,
                f"{caught} of {len(wrong)}",
                f"{share:.0%}",
                ", ".join(alarms) or "none",
                ", ".join(m.removeprefix("wrong_") for m in missed) or "—",
            )
        )
    head = ("grade_id", "wrong answers flagged", "share", "false alarms", "wrong answers it passes")
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
    else:
        lines = ["  ".join(head)] + ["  ".join(r) for r in rows]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m kit.selfchecks")
    ap.add_argument("grade_ids", nargs="*")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    outcomes = measure(args.grade_ids, args.jobs)
    for o in outcomes:
        if o.error:
            print(f"!! {o.grade_id}/{o.name}: {o.error}", file=sys.stderr)
    print(table(outcomes, args.markdown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
