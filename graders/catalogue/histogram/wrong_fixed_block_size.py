# verdict: fail
# message: blocks of threads_per_block
# why: ignores threads_per_block and always launches blocks of 128 threads
import numpy as np
from numba import cuda


@cuda.jit
def histogram_kernel(data, bins):
    i = cuda.grid(1)
    if i < data.shape[0]:
        cuda.atomic.add(bins, data[i], 1)


def launch_histogram(data, n_bins, threads_per_block=256):
    bins = np.zeros(n_bins, dtype=np.int32)
    if len(data):
        histogram_kernel[(len(data) + 127) // 128, 128](data, bins)
    return bins
