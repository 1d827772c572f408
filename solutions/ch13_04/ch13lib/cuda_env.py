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


def nvvm_present() -> bool:
    """True when NVVM, the compiler numba needs to build kernels for a real GPU, is installed: NVIDIA's
    wheel (``numba-cuda[cu12]`` brings ``nvidia-cuda-nvcc-cu12``) or a CUDA toolkit."""
    import glob
    import importlib.util

    try:
        spec = importlib.util.find_spec("nvidia.cuda_nvcc")
    except (ImportError, ValueError):
        spec = None
    roots = list(spec.submodule_search_locations or []) if spec is not None else []
    roots += [os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", ""), "/usr/local/cuda"]
    return any(glob.glob(os.path.join(r, "nvvm", "lib*", "*nvvm*")) for r in roots if r)


# Said when a GPU is here but numba could not compile for it.
NO_NVVM = (
    "an NVIDIA GPU is here, but not NVVM, the CUDA compiler numba needs, so kernels run on the simulator. "
    "To use the GPU: python -m pip install 'numba-cuda[cu12]==0.30.4', then restart the kernel. / "
    "这台机器有 NVIDIA GPU, 但没有 numba 需要的 CUDA 编译器 NVVM, 所以 kernel 在模拟器上运行。"
    "要使用 GPU: python -m pip install 'numba-cuda[cu12]==0.30.4', 然后重启 kernel。"
)


def select_cuda_backend(verbose: bool = True) -> str:
    """Set ``NUMBA_ENABLE_CUDASIM=1`` unless a GPU and NVVM are present; return "gpu" or "simulator".

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
    reason = ""
    if "NUMBA_ENABLE_CUDASIM" not in os.environ:
        gpu = gpu_present()
        if gpu and not nvvm_present():
            gpu, reason = False, NO_NVVM
        os.environ["NUMBA_ENABLE_CUDASIM"] = "0" if gpu else "1"
    sim = os.environ["NUMBA_ENABLE_CUDASIM"] == "1"
    if verbose and reason:
        print(reason)
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
