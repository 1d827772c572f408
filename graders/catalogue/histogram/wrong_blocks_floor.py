# verdict: fail
# message: counted
# message: round the number of blocks up
# why: blocks = n // threads_per_block: the tail of n % threads_per_block elements is never counted
import numpy as np
from numba import cuda


@cuda.jit
def histogram_kernel(data, bins):
    i = cuda.grid(1)
    if i < data.shape[0]:
        cuda.atomic.add(bins, data[i], 1)


def launch_histogram(data, n_bins, threads_per_block=256):
    bins = np.zeros(n_bins, dtype=np.int32)
    blocks = max(1, len(data) // threads_per_block)
    if len(data):
        histogram_kernel[blocks, threads_per_block](data, bins)
    return bins
