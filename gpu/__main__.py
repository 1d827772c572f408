"""Run every gpu/check_*.py in its own process, within an overall budget, and summarise.

    python -m gpu [--budget-s 480] [--log FILE]

Exits 0 on a machine without a GPU (after saying so), 1 if any check failed on a GPU machine.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def gpu_present() -> str:
    """A description of the GPU, or "" when there is none (asked in a child: numba picks once)."""
    if not shutil.which("nvidia-smi"):
        return ""
    out = subprocess.run(
        ["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
        capture_output=True,
        text=True,
    )
    return out.stdout.strip() if out.returncode == 0 else ""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gpu")
    ap.add_argument("--budget-s", type=float, default=480.0, help="all checks together (8 minutes)")
    ap.add_argument("--log", help="also write the whole output here")
    args = ap.parse_args(argv)
    device = gpu_present()
    checks = sorted(glob.glob(os.path.join(HERE, "check_*.py")))
    if not device:
        print(
            f"no GPU: skipped ({len(checks)} GPU checks ready: {', '.join(os.path.basename(c)[6:-3] for c in checks)})"
        )
        return 0
    print(f"GPU: {device}")
    env = dict(os.environ, PYTHONPATH=ROOT, CH13_DEVICE="gpu", PYTHONUNBUFFERED="1")
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    log = open(args.log, "w") if args.log else None
    deadline = time.monotonic() + args.budget_s
    failed = []
    for check in checks:
        name = os.path.basename(check)[:-3]
        left = deadline - time.monotonic()
        if left < 10:
            failed.append(f"{name} (no time left)")
            continue
        t = time.perf_counter()
        try:
            proc = subprocess.run(
                [sys.executable, check], cwd=ROOT, env=env, capture_output=True, text=True, timeout=left
            )
            out, rc = proc.stdout + proc.stderr, proc.returncode
        except subprocess.TimeoutExpired as e:
            out, rc = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or ""), "timeout"
        seconds = time.perf_counter() - t
        print(f"== {name}: {'ok' if rc == 0 else 'FAILED (' + str(rc) + ')'} in {seconds:.1f} s\n{out.rstrip()}\n")
        if log:
            log.write(f"== {name}: rc={rc} {seconds:.1f} s\n{out}\n")
        if rc != 0:
            failed.append(name)
    print("all GPU checks passed" if not failed else f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
