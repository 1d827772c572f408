# verdict: pass
# why: a per-block histogram in shared memory (barrier, shared atomics, barrier) that thread 0 of each block merges into the global bins alone, with atomics: the contract allows it (a red-team helper's right answer: the per-thread share counted its n_bins atomics as reads and failed it, 4/8)
import numpy as np
from numba import cuda, int32

MAX_BINS = 256


@cuda.jit
def histogram_kernel(data, bins):
    # a per-block histogram in shared memory; after a barrier thread 0 merges it with atomics
    local = cuda.shared.array(MAX_BINS, int32)
    t = cuda.threadIdx.x
    nb = bins.shape[0]
    if t == 0:
        for k in range(nb):
            local[k] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < data.shape[0]:
        cuda.atomic.add(local, data[i], 1)
    cuda.syncthreads()
    if t == 0:
        for k in range(nb):
            if local[k] != 0:
                cuda.atomic.add(bins, k, local[k])


def launch_histogram(data, n_bins, threads_per_block=256):
    out = np.zeros(n_bins, dtype=np.int32)
    n = data.size
    if n == 0:
        return out
    blocks = (n + threads_per_block - 1) // threads_per_block
    histogram_kernel[blocks, threads_per_block](data, out)
    return out
