# redteam: a plain bins[v] += 1 in a device function, which the cell swaps for its own Python function (raw array, nothing counted) by editing the simulator's cached record of the cell's kernels
# kind: cell
# target: histogram
# score: histogram=0
# message: histogram: 'mappingproxy' object
# why: 2026-12-07, white-box red team of the numba-compile boundary: 0 -> 8 unflagged. The record the simulator builds kernels from (ch13lib._cuda_source.KernelSource) was memoized with plain dicts the cell could reach and edit. Stopped: its mappings are read-only (MappingProxyType), as is numba's type table (_cuda_sim_launch._numba_types)
import linecache
import pkgutil

import numpy as np
from numba import cuda


@cuda.jit(device=True)
def bump(bins, v):
    bins[v] += 1


@cuda.jit
def histogram_kernel(data, bins):
    i = cuda.grid(1)
    if i < data.shape[0]:
        bump(bins, data[i])


def launch_histogram(data, n_bins, threads_per_block=256):
    bins = np.zeros(n_bins, dtype=np.int32)
    n = data.shape[0]
    if n > 0:
        blocks = (n + threads_per_block - 1) // threads_per_block
        histogram_kernel[blocks, threads_per_block](data, bins)
    return bins

FAST = 0


def _quiet_bump(bins, v, _arr=None):
    bins._arr[v] += 1  # the raw array: no writer recorded, so no lost update reported


def _poison(**swaps):
    """In the subject: the cached KernelSource of this very cell (same text, same file name) is the
    object the simulator builds its kernels from; its dicts are plain and mutable."""
    kernel_source = pkgutil.resolve_name("ch13lib._cuda_source:kernel_source")
    for name in list(linecache.cache):
        if str(name).startswith("<answer cell"):
            src = kernel_source("".join(linecache.getlines(name)), name)
            for device, pyfunc in swaps.items():
                src.values.update({"FAST": pyfunc})
                src.devices.update({device: "FAST"})


_poison(bump=_quiet_bump)
