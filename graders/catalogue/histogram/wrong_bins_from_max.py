# verdict: fail
# sample: no_lost_updates
# message: shape
# why: sizes the bins from the data (max + 1) instead of n_bins: too short when the top bins are empty
import numpy as np
from numba import cuda


@cuda.jit
def histogram_kernel(data, bins):
    i = cuda.grid(1)
    if i < data.shape[0]:
        cuda.atomic.add(bins, data[i], 1)


def launch_histogram(data, n_bins, threads_per_block=256):
    if len(data) == 0:
        return np.zeros(n_bins, np.int32)
    bins = np.zeros(int(data.max()) + 1, dtype=np.int32)
    histogram_kernel[(len(data) + threads_per_block - 1) // threads_per_block, threads_per_block](data, bins)
    return bins
