# redteam: a per-block shared histogram that thread 0 zeroes with no barrier before the other threads' atomic adds
# kind: cell
# target: histogram
# score: histogram=0
# message: histogram: data race
# why: found by a white-box red-team helper (stop 34: 8/8, honest 0, no flag): an atomic on shared memory set only the cell's init flag; it now takes part in the phase bookkeeping: another thread's plain store or load of the cell in the same phase is a race (_cuda_sim_device)
import numpy as np
from numba import cuda, int32

MAX_BINS = 256


@cuda.jit
def histogram_kernel(data, bins):
    # a per-block histogram whose zeroing is not followed by cuda.syncthreads(): on a GPU other
    # threads' atomics can land before thread 0 clears the cell, and their counts are wiped
    local = cuda.shared.array(MAX_BINS, int32)
    t = cuda.threadIdx.x
    nb = bins.shape[0]
    if t == 0:
        for k in range(nb):
            local[k] = 0
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
    out = np.zeros(n_bins, dtype=np.int32)
    n = data.size
    if n == 0:
        return out
    histogram_kernel[(n - 1) // threads_per_block + 1, threads_per_block](data, out)
    return out
