"""What the per-notebook benchmarks share: the reference and the stub of an answer cell, and
grading one the way autograde does (kit.grading.grade_cell: `python -m graders` in its own
sandboxed process), timed in wall and CPU seconds."""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sources(grade_id: str) -> tuple[str, str]:
    """(reference solution, release stub) of the answer cell."""
    from kit.answers import reference, stub

    return reference(grade_id), stub(grade_id)


def timed(grade_id: str, source: str, sandbox: bool = True) -> tuple[float, float, float, float]:
    """(wall seconds, CPU seconds of every process it started, points, max points)."""
    from kit.grading import grade_cell

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    verdict = grade_cell(grade_id, source, sandbox=sandbox)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu, verdict.score, verdict.max_score


def notebook_table(title: str, grade_ids: list[str], runs: int, sandbox: bool) -> tuple[float, float]:
    """Prints reference vs stub medians per grade_id; returns (notebook wall s, notebook CPU s)."""
    print(
        f"{title}: {os.cpu_count()} cores, median of {runs} runs, "
        f"{'sandboxed' if sandbox else 'unsandboxed'} `python -m graders` processes, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    print(f"{'grade_id':<22}{'reference (s)':>14}{'score':>10}{'stub (s)':>10}{'ratio':>8}{'CPU s':>8}")
    total_ref = total_stub = total_cpu = 0.0
    for gid in grade_ids:
        ref, stub = sources(gid)
        ref_times, stub_times, cpus, score = [], [], [], ""
        for _ in range(runs):
            stub_times.append(timed(gid, stub, sandbox)[0])
            wall, cpu, got, total = timed(gid, ref, sandbox)
            ref_times.append(wall)
            cpus.append(cpu)
            score = f"{got:g}/{total:g}"
        r, s, c = statistics.median(ref_times), statistics.median(stub_times), statistics.median(cpus)
        total_ref, total_stub, total_cpu = total_ref + r, total_stub + s, total_cpu + c
        print(f"{gid:<22}{r:>14.2f}{score:>10}{s:>10.2f}{r / s:>8.2f}{c:>8.1f}")
    print(
        f"{'the notebook':<22}{total_ref:>14.2f}{'':>10}{total_stub:>10.2f}{total_ref / total_stub:>8.2f}"
        f"{total_cpu:>8.1f}"
    )
    return total_ref, total_cpu


def notebook_main(argv, title: str, grade_ids: list[str], summary: str) -> int:
    """A notebook's benchmark script: ``--runs``, ``--no-sandbox``, the table, then ``summary``
    (formatted with ``wall``, the seconds a correct submission took) and what its CPU seconds need."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-sandbox", action="store_true", help="run the grader without kit.sandbox")
    args = ap.parse_args(argv)
    wall, cpu = notebook_table(title, grade_ids, max(3, args.runs), not args.no_sandbox)
    cores = os.cpu_count() or 1
    print(f"{summary.format(wall=wall)} (its {cpu:.1f} CPU s need at least {cpu / cores:.1f} s on {cores} idle cores)")
    return 0


def runner_once(grade_id: str, source: str, env: dict) -> tuple[float, float]:
    """(wall seconds, points) of one `python -m graders <grade_id>` subprocess, as autograde runs
    it (the HMAC key on stdin), without the sandbox."""
    with tempfile.TemporaryDirectory(prefix=f"bench-{grade_id}-") as work:
        answer = os.path.join(work, "answer.py")
        results = os.path.join(work, "results.jsonl")
        with open(answer, "w", encoding="utf-8") as f:
            f.write(source)
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "graders", grade_id, answer, results, "--no-sandbox"],
            cwd=ROOT,
            env=env,
            input=b"bench-key\n",
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=True,
        )
        elapsed = time.perf_counter() - start
        points = 0.0
        with open(results, encoding="utf-8") as f:
            for line in f:
                item = json.loads(json.loads(line)["line"])
                points += item.get("points", 0.0) if "test" in item else 0.0
    return elapsed, points


def runner_table(grade_id: str, runs: int, extra_env: dict, target: str) -> None:
    """Prints the medians of `python -m graders` on the stub (the baseline) and the reference."""
    from kit.grading import judge_env

    env = {**judge_env(), **extra_env}  # the environment autograde's judges get
    reference, stub = sources(grade_id)
    print(
        f"{grade_id}: grading with `python -m graders` (subprocess), {runs} runs each, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}"
    )
    medians = {}
    for label, source in (("stub (baseline)", stub), ("reference", reference)):
        times, scores = [], set()
        for _ in range(runs):
            t, points = runner_once(grade_id, source, env)
            times.append(t)
            scores.add(points)
        medians[label] = statistics.median(times)
        print(
            f"  {label:16s} median {medians[label]:6.2f} s  runs {', '.join(f'{t:.2f}' for t in times)}  "
            f"points {sorted(scores)}"
        )
    print(f"  reference / baseline = {medians['reference'] / medians['stub (baseline)']:.2f}x ({target})")
