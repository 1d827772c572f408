"""House rules for the kit's own text: comments, docstrings and docs say what is true now and why."""

from __future__ import annotations

import os
import re
import subprocess

from kit import ROOT

# A red-team round's number (a stop's, a round's, an ordinal red team's): a reader does not know what
# a stop or a round was, and the shipped library would keep a list of what once got through.
ROUND_NUMBER = re.compile(
    r"\bstops? \d+\b|\b\d+(st|nd|rd|th) (white-box )?red[ -]team|\bred[ -]team[, ]+(stop|round) ?\d+|\bround \d+\b",
    re.IGNORECASE,
)
SCANNED = ("kit/", "graders/", "gpu/", "bench/", "tests/", "source/", "release/", "solutions/", "docs/", "README.md")
# The catalogue's `# why:` headers and the red team's corpus keep their history on purpose.
SKIPPED = ("graders/catalogue/", "tests/redteam/", "tests/test_house.py")


def _files() -> list[str]:
    """The tracked files under SCANNED, or, outside a git checkout, every file there."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--", *SCANNED], cwd=ROOT, capture_output=True, check=True, timeout=60
        ).stdout
        paths = [p for p in out.decode().split("\0") if p]
    except (OSError, subprocess.SubprocessError):
        paths = []
        for top in SCANNED:
            full = os.path.join(ROOT, top)
            if os.path.isfile(full):
                paths.append(top)
            for folder, dirs, names in os.walk(full):
                dirs[:] = [d for d in dirs if d not in ("__pycache__", ".ipynb_checkpoints")]
                paths.extend(os.path.relpath(os.path.join(folder, n), ROOT) for n in names)
    return sorted(p for p in paths if not p.startswith(SKIPPED))


def test_no_round_numbers_in_code_or_docs():
    hits = []
    for rel in _files():
        try:
            with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
                lines = f.read().splitlines()
        except (OSError, UnicodeDecodeError):  # binary data, or deleted in the working tree
            continue
        hits.extend(f"{rel}:{i}: {line.strip()[:160]}" for i, line in enumerate(lines, 1) if ROUND_NUMBER.search(line))
    assert not hits, "round numbers (say why the code is so, in the present tense):\n" + "\n".join(hits)
