# redteam: global thread 0 alone loops over all the data with a plain bins[v] += 1: no atomics, no parallel work, so no update is ever lost
# kind: cell
# target: histogram
# score: histogram=0
# message: histogram: every thread counts its own element
# why: found by a white-box red-team helper (stop 33: 8/8, no flag): one writer per bin never met the lost-update check, and nothing asked the threads to share the work. Now no thread may make much more than its share of global reads (the simulator's per-thread counts)
import numpy as np
from numba import cuda


@cuda.jit
def histogram_kernel(data, bins):
    i = cuda.grid(1)
    if i == 0:
        for j in range(data.shape[0]):
            bins[data[j]] += 1


def launch_histogram(data, n_bins, threads_per_block=256):
    bins = np.zeros(n_bins, dtype=np.int32)
    n = data.shape[0]
    if n > 0:
        blocks = (n + threads_per_block - 1) // threads_per_block
        histogram_kernel[blocks, threads_per_block](data, bins)
    return bins
