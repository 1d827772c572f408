"""Benchmark: how long `python -m graders word_count` takes on the reference solution.

Runs the runner as autograde does (a subprocess, the HMAC key on stdin, the kit's environment),
N times each on the notebook's reference solution and on the release stub (the baseline:
interpreter start, imports and Ray's start, since the first test starts the cluster), and prints
the medians and their ratio. Asserts nothing about time.

    .venv/bin/python bench/bench_word_count.py [N]
"""

from __future__ import annotations

import sys

from common import runner_table

RAY_ENV = {"RAY_AUTH_MODE": "disabled", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"}


def main(argv: list[str]) -> int:
    runner_table(
        "word_count",
        int(argv[0]) if argv else 3,
        RAY_ENV,
        "target: reference at most 30 s on 2 cores, Ray's start included",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
