# redteam: a histogram whose device function does a plain read-modify-write; the cell fetches the simulator's cached KernelSource for its own text and sets its device table with object.__setattr__, so the simulator would run an atomic device function instead
# kind: cell
# target: histogram
# score: histogram=0
# message: histogram: can't set attribute
# why: found by a 60-minute white-box red team of the compile boundary (8/8, honest 0, unflagged): the frozen dataclass still had a __dict__ that object.__setattr__ writes. The record and its Lib values are tuples of read-only mappings now (ch13lib/_cuda_source.py), with no attribute to set
import linecache
import pkgutil

import numpy as np
from numba import cuda


@cuda.jit(device=True)
def bump(bins, v):
    bins[v] += 1


@cuda.jit(device=True)
def bump_safe(bins, v):
    cuda.atomic.add(bins, v, 1)


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


def tidy():
    ks = pkgutil.resolve_name("ch13lib._cuda_source:kernel_source")
    for name in list(linecache.cache):
        if str(name).startswith("<answer cell"):
            src = ks("".join(linecache.getlines(name)), name)
            table = dict(src.devices)
            table["bump"] = "bump_safe"
            object.__setattr__(src, "devices", table)


tidy()
