# verdict: fail
# message: data race
# why: a per-block shared histogram updated with local[v] += 1: threads of a block race on one shared bin
import numpy as np
from numba import cuda, int32


@cuda.jit
def histogram_kernel(data, bins):
    local = cuda.shared.array(256, int32)
    t = cuda.threadIdx.x
    if t < bins.shape[0]:
        local[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < data.shape[0]:
        local[data[i]] += 1
    cuda.syncthreads()
    if t < bins.shape[0]:
        cuda.atomic.add(bins, t, local[t])


def launch_histogram(data, n_bins, threads_per_block=256):
    bins = np.zeros(n_bins, dtype=np.int32)
    n = data.shape[0]
    if n > 0:
        histogram_kernel[(n + threads_per_block - 1) // threads_per_block, threads_per_block](data, bins)
    return bins
