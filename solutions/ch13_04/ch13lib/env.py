"""Check a student's setup: Python, the pinned packages of ``requirements.txt``, and the CUDA backend.

Run it from the assignment folder (the one holding ``requirements.txt`` and ``ch13lib/``)::

    python -m ch13lib.env

or in a notebook cell: ``from ch13lib.env import check_setup; check_setup()``. It prints one line
per check (✔ fine / ✘ what to do) and never imports numba, so the CUDA backend can still be chosen
afterwards (``ch13lib.cuda_env.select_cuda_backend``: a real GPU when there is one, otherwise
numba's CPU simulator, set before numba's first import).
"""

from __future__ import annotations

import os
import re
import sys
from importlib import metadata

REQUIREMENTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "requirements.txt")
PYTHON = (3, 11)
_PIN = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([^\s;#]+)")


def read_pins(path: str = REQUIREMENTS) -> dict[str, str]:
    """``name==version`` lines of a requirements file (comments and commented-out lines skipped)."""
    pins = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = _PIN.match(line)
            if m and not line.lstrip().startswith("#"):
                pins[m.group(1).lower()] = m.group(2)
    return pins


def check_setup(requirements: str = REQUIREMENTS, verbose: bool = True) -> bool:
    """Print one ✔/✘ line per check; return True when everything matches."""
    from ch13lib.cuda_env import gpu_present

    lines: list[tuple[bool, str]] = []
    py = sys.version_info[:2]
    lines.append(
        (
            py == PYTHON,
            f"Python {py[0]}.{py[1]}"
            + (
                ""
                if py == PYTHON
                else f": the course uses Python {PYTHON[0]}.{PYTHON[1]} / 本课程使用 Python "
                f"{PYTHON[0]}.{PYTHON[1]}; make a venv with it"
            ),
        )
    )
    try:
        pins = read_pins(requirements)
    except OSError as e:
        pins = {}
        lines.append(
            (False, f"cannot read {requirements}: {e} — run this from the assignment folder / 请在作业文件夹中运行")
        )
    for name, want in pins.items():
        try:
            have = metadata.version(name)
        except metadata.PackageNotFoundError:
            lines.append((False, f"{name}: not installed / 未安装 — python -m pip install {name}=={want}"))
            continue
        # a local build tag (torch 2.13.0+cpu) is the same release
        ok = have.split("+")[0] == want
        lines.append(
            (
                ok,
                f"{name} {have}"
                + ("" if ok else f": the course pins {want} / 课程要求 {want} — python -m pip install {name}=={want}"),
            )
        )
    gpu = gpu_present()
    sim = os.environ.get("NUMBA_ENABLE_CUDASIM")
    if sim is not None:
        backend = (
            "numba's CPU simulator (NUMBA_ENABLE_CUDASIM=1)" if sim == "1" else "a real GPU (NUMBA_ENABLE_CUDASIM=0)"
        )
    else:
        backend = (
            "a real GPU (NVIDIA driver found)"
            if gpu
            else "numba's CPU simulator, chosen automatically (no GPU found) / 未发现 GPU, 自动使用 CPU 模拟器"
        )
    lines.append((True, f"CUDA backend for notebook 02: {backend}"))
    if verbose:
        for ok, text in lines:
            print(("✔ " if ok else "✘ ") + text)
        good = all(ok for ok, _ in lines)
        print("setup OK / 环境就绪" if good else "fix the ✘ lines above / 请修正上面标 ✘ 的项")
    return all(ok for ok, _ in lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    return 0 if check_setup(argv[0] if argv else REQUIREMENTS) else 1


if __name__ == "__main__":
    sys.exit(main())
