"""The GPU runner: every exercise's GPU path in one command (``python -m gpu`` / ``make gpu``).

Each ``gpu/check_<grade_id>.py`` has a ``main()`` that grades the reference solution and a few wrong
ones from the catalogue on real CUDA (numba.cuda with cupy device arrays) or NCCL, prints its
figures, and returns 0 ("no GPU: skipped" and 0 on a machine without one).
"""
