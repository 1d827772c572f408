"""Pick numba's CUDA backend before numba is imported: a real GPU when there is one, else the simulator.

numba reads ``NUMBA_ENABLE_CUDASIM`` once, at its first import, so this must run in the first code
cell of a notebook, before any ``from numba import cuda``. It never imports numba itself.
"""

from __future__ import annotations

import ctypes.util
import os
import shutil
import sys


def gpu_present() -> bool:
    """True when this machine looks like it has an NVIDIA GPU and driver (nvidia-smi or libcuda)."""
    if os.environ.get("CUDA_VISIBLE_DEVICES", None) in ("", "-1"):
        return False
    return bool(shutil.which("nvidia-smi") or ctypes.util.find_library("cuda"))


def select_cuda_backend(verbose: bool = True) -> str:
    """Set ``NUMBA_ENABLE_CUDASIM=1`` unless a GPU is present; return "gpu" or "simulator".

    An explicit ``NUMBA_ENABLE_CUDASIM`` in the environment is respected. If numba was already
    imported the choice can no longer change: say so, and report what numba is using.
    """
    if "numba" in sys.modules:
        sim = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
        if verbose:
            print(
                "numba is already imported, so its CUDA backend is fixed: "
                f"{'the CPU simulator' if sim else 'a real GPU'}. Restart the kernel and run this cell "
                "first to change it."
            )
        return "simulator" if sim else "gpu"
    if "NUMBA_ENABLE_CUDASIM" not in os.environ:
        os.environ["NUMBA_ENABLE_CUDASIM"] = "0" if gpu_present() else "1"
    sim = os.environ["NUMBA_ENABLE_CUDASIM"] == "1"
    if verbose:
        print(
            "CUDA backend: "
            + (
                "numba's CPU simulator (no GPU found): kernels run as Python, one thread at a time, so keep grids small"
                if sim
                else "a real GPU (numba.cuda)"
            )
        )
    return "simulator" if sim else "gpu"
