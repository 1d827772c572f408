# verdict: fail
# message: plain store
# why: every block zeroes the bins in the kernel before counting: a later block wipes counts other blocks already added
import numpy as np
from numba import cuda


@cuda.jit
def histogram_kernel(data, bins):
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    if t < bins.shape[0]:
        bins[t] = 0
    cuda.syncthreads()
    if i < data.shape[0]:
        cuda.atomic.add(bins, data[i], 1)


def launch_histogram(data, n_bins, threads_per_block=256):
    bins = np.zeros(n_bins, dtype=np.int32)
    n = data.shape[0]
    if n > 0:
        blocks = (n + threads_per_block - 1) // threads_per_block
        histogram_kernel[blocks, threads_per_block](data, bins)
    return bins
