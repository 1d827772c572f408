"""Benchmark: how long `python -m graders word_count` takes on the reference solution.

Runs the runner as autograde does (a subprocess, the HMAC key on stdin, the kit's environment),
N times each on the notebook's reference solution and on a trivially failing stub (the baseline:
interpreter start, imports and Ray's start, since the first test starts the cluster), and prints
the medians and their ratio. Asserts nothing about time.

    .venv/bin/python bench/bench_word_count.py [N]
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

STUB = '''
def map_fn(record):
    raise NotImplementedError()

def reduce_fn(key, values):
    raise NotImplementedError()

def partition(key, n_reduce):
    raise NotImplementedError()

def run_mapreduce(records, map_fn, reduce_fn, n_map=4, n_reduce=2):
    raise NotImplementedError()
'''


def env() -> dict:
    e = dict(os.environ)
    e.update(PYTHONPATH=ROOT, PYTHONHASHSEED="0", HYPOTHESIS_PROFILE="grading", PYTHONDONTWRITEBYTECODE="1",
             RAY_AUTH_MODE="disabled", RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0", RAY_USAGE_STATS_ENABLED="0",
             OMP_NUM_THREADS="1")
    return e


def grade_once(source: str) -> tuple[float, float]:
    with tempfile.TemporaryDirectory(prefix="bench-wc-") as work:
        answer = os.path.join(work, "answer.py")
        results = os.path.join(work, "results.jsonl")
        with open(answer, "w", encoding="utf-8") as f:
            f.write(source)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "graders", "word_count", answer, results], cwd=ROOT, env=env(),
                       input=b"bench-key\n", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        elapsed = time.perf_counter() - start
        points = 0.0
        with open(results, encoding="utf-8") as f:
            for line in f:
                item = json.loads(json.loads(line)["line"])
                points += item.get("points", 0.0) if "test" in item else 0.0
    return elapsed, points


def main(argv: list[str]) -> int:
    n = int(argv[0]) if argv else 3
    from kit.answers import reference_solutions
    reference = reference_solutions()["word_count"]
    print(f"word_count: grading with `python -m graders` (subprocess), {n} runs each, "
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
    print(f"  reference / baseline = {ratio:.2f}x (target: reference at most 30 s on 2 cores, Ray's start included)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
