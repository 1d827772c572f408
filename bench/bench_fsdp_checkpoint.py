"""Benchmark: how long `python -m graders fsdp_checkpoint` takes on the reference solution.

Runs the runner as autograde does (a subprocess, the HMAC key on stdin), N times each on the
notebook's reference solution and on a trivially failing stub (the baseline: interpreter start,
importing torch and the grader; the stub fails at the first save, so no training happens), and
prints the medians and their ratio. With --sandbox it also times kit.grading.grade_cell, the
sandboxed path nbgrader's autograde takes. Asserts nothing about time.

    .venv/bin/python bench/bench_fsdp_checkpoint.py [N] [--sandbox]
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

GID = "fsdp_checkpoint"
STUB = '''
def save_checkpoint(model, optimizer, epoch, path):
    raise NotImplementedError()


def load_checkpoint(model, optimizer, path):
    raise NotImplementedError()
'''


def env() -> dict:
    e = dict(os.environ)
    e.update(PYTHONPATH=ROOT, PYTHONHASHSEED="0", HYPOTHESIS_PROFILE="grading",
             PYTHONDONTWRITEBYTECODE="1", OMP_NUM_THREADS="1")
    return e


def grade_once(source: str) -> tuple[float, float]:
    with tempfile.TemporaryDirectory(prefix="bench-fsdp-") as work:
        answer = os.path.join(work, "answer.py")
        results = os.path.join(work, "results.jsonl")
        with open(answer, "w", encoding="utf-8") as f:
            f.write(source)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "graders", GID, answer, results], cwd=ROOT, env=env(),
                       input=b"bench-key\n", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=True)
        elapsed = time.perf_counter() - start
        points = 0.0
        with open(results, encoding="utf-8") as f:
            for line in f:
                item = json.loads(json.loads(line)["line"])
                points += item.get("points", 0.0) if "test" in item else 0.0
    return elapsed, points


def main(argv: list[str]) -> int:
    sandbox = "--sandbox" in argv
    args = [a for a in argv if not a.startswith("--")]
    n = int(args[0]) if args else 3
    from kit.answers import reference_solutions
    reference = reference_solutions()[GID]
    print(f"{GID}: grading with `python -m graders` (subprocess), {n} runs each, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    medians = {}
    for label, source in (("stub (baseline)", STUB), ("reference", reference)):
        times, scores = [], set()
        for _ in range(n):
            t, points = grade_once(source)
            times.append(t)
            scores.add(points)
        medians[label] = statistics.median(times)
        print(f"  {label:16s} median {medians[label]:6.2f} s  runs {', '.join(f'{t:.2f}' for t in times)}  "
              f"points {sorted(scores)}")
    ratio = medians["reference"] / medians["stub (baseline)"]
    print(f"  reference / baseline = {ratio:.2f}x (target: reference at most 60 s on 2 cores)")
    if sandbox:
        from kit.grading import grade_cell
        times = []
        for _ in range(n):
            start = time.perf_counter()
            v = grade_cell(GID, reference, sandbox=True)
            times.append(time.perf_counter() - start)
        print(f"  sandboxed grade_cell (as autograde): median {statistics.median(times):6.2f} s  "
              f"runs {', '.join(f'{t:.2f}' for t in times)}  points {v.score:g}/{v.max_score:g}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
