# redteam: a racy bins[v] += 1 applied to a numpy array kept in a class attribute
# kind: cell
# target: histogram
# score: histogram=0
# message: histogram: numba's CUDA compiler refuses
# why: found by a white-box red-team helper (stop 34: 8 -> 0, no flag): the captured-globals check took any class, any module, isinstance of int and any builtin function, and never looked at defaults; it now takes exact builtin types, tuples of them, the libraries' own modules (the very objects: math, cmath, numpy, numba and their submodules), their genuine classes and numba objects, builtin functions of those modules only, and checks defaults too (_cuda_sim_launch._constant)
import numpy as np
from numba import cuda


class _Out:
    bins = [None]


@cuda.jit
def histogram_kernel(data, bins):
    # the plain, racy bins[v] += 1 of wrong_plain_increment, through a reference the launcher stashed
    i = cuda.grid(1)
    if i < data.shape[0]:
        _Out.bins[0][data[i]] += 1


def launch_histogram(data, n_bins, threads_per_block=256):
    bins = np.zeros(n_bins, dtype=np.int32)
    n = data.shape[0]
    if n > 0:
        blocks = (n + threads_per_block - 1) // threads_per_block
        _Out.bins[0] = bins
        histogram_kernel[blocks, threads_per_block](data, bins)
        _Out.bins[0] = None
    return bins
