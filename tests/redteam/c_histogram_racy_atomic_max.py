# redteam: cuda.atomic.max(bins, v, bins[v] + 1): a plain read of the bin, then an atomic
# kind: cell
# target: histogram
# score: histogram=0
# message: histogram: data race
# why: found by a white-box red-team helper (stop 34: 8/8, honest 0, no flag): a plain global load was never checked against atomics on the same element; a plain load of an element other threads update atomically in the launch is now a race (_cuda_sim_device)
import numpy as np
from numba import cuda


@cuda.jit
def histogram_kernel(data, bins):
    # racy on a GPU: two threads read the same old count, both atomic-max it to old + 1, one count lost
    i = cuda.grid(1)
    if i < data.shape[0]:
        v = data[i]
        cuda.atomic.max(bins, v, bins[v] + 1)


def launch_histogram(data, n_bins, threads_per_block=256):
    bins = np.zeros(n_bins, dtype=np.int32)
    n = data.shape[0]
    if n > 0:
        blocks = (n + threads_per_block - 1) // threads_per_block
        histogram_kernel[blocks, threads_per_block](data, bins)
    return bins
