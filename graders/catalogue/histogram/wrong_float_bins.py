# verdict: fail
# message: dtype float64
# why: np.zeros(n_bins) is float64: the contract asks for int32 counts
import numpy as np
from numba import cuda


@cuda.jit
def histogram_kernel(data, bins):
    i = cuda.grid(1)
    if i < data.shape[0]:
        cuda.atomic.add(bins, data[i], 1)


def launch_histogram(data, n_bins, threads_per_block=256):
    bins = np.zeros(n_bins)
    if len(data):
        histogram_kernel[(len(data) + threads_per_block - 1) // threads_per_block, threads_per_block](data, bins)
    return bins
