"""The fresh interpreter's side of notebook 04's grading: what kit/subject.py ``child`` may run on
the answer cell under the subject's guards (kit/harnesses/mapreduce_probe.py ``partition_elsewhere``
starts one per hash seed).

Light on purpose: the child imports neither Ray nor ch13lib's probes, so it starts in well under a
second and watches only this module.
"""

from __future__ import annotations

# What a fresh interpreter the grading subject starts may run on the answer cell (kit/subject.py).
CHILD_API = ("partition_rows",)


def partition_rows(cell, keys, ns) -> list:
    """``[[partition(k, n) for n in ns] for k in keys]`` of ``cell.module``, in this process."""
    partition = cell.module.partition
    return [[partition(k, n) for n in ns] for k in keys]
