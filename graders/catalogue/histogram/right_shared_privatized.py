# verdict: pass
# why: a per-block histogram in shared memory (atomics there), merged into the global bins with atomics
import numpy as np
from numba import cuda, int32

MAX_BINS = 256


@cuda.jit
def histogram_kernel(data, bins):
    local = cuda.shared.array(MAX_BINS, int32)
    t = cuda.threadIdx.x
    nb = bins.shape[0]
    k = t
    while k < nb:
        local[k] = 0
        k += cuda.blockDim.x
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < data.shape[0]:
        cuda.atomic.add(local, data[i], 1)
    cuda.syncthreads()
    k = t
    while k < nb:
        if local[k] != 0:
            cuda.atomic.add(bins, k, local[k])
        k += cuda.blockDim.x


def launch_histogram(data, n_bins, threads_per_block=256):
    assert n_bins <= MAX_BINS
    out = np.zeros(n_bins, dtype=np.int32)
    n = data.size
    if n == 0:
        return out
    histogram_kernel[(n - 1) // threads_per_block + 1, threads_per_block](data, out)
    return out
