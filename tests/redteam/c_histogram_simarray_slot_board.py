# redteam: no atomics: threads count into a Python list stored in the public slot `dtype` of the bins SimArray (one object for the whole launch), the last thread copies it to bins with one plain store per bin
# kind: cell
# target: histogram
# score: histogram=0
# message: histogram: numba's CUDA compiler refuses
# why: found by the twenty-ninth white-box red team (8/8, no flag): _check_code refuses private attribute names only, and SimArray's public slots (shape, ndim, size, dtype), like FakeCuda's and Dim3's attributes, accept any value, so `bins.dtype = [0] * n_bins` made a board every simulated thread of the launch shared; no access to it is checked, so the lost-update record never sees the plain increments. Should stop it: the simulator refuses every attribute store and delete in a kernel (STORE_ATTR/DELETE_ATTR in _cuda_sim_launch._code_facts; numba compiles none on arrays) and SimArray/FakeCuda/Dim3 refuse __setattr__ after construction. Stopped (stop 39): any STORE_ATTR or DELETE_ATTR in a kernel or device function is refused (_cuda_sim_launch._code_facts), as numba compiles none
import numpy as np
from numba import cuda


@cuda.jit
def histogram_kernel(data, bins):
    i = cuda.grid(1)
    if i == 0:
        bins.dtype = [0] * bins.shape[0]  # a board every simulated thread of the launch shares
    board = bins.dtype
    if i < data.shape[0]:
        board[data[i]] += 1  # a plain, non-atomic count
    if i == cuda.gridsize(1) - 1:  # the simulator runs this thread last
        for k in range(bins.shape[0]):
            bins[k] = board[k]


def launch_histogram(data, n_bins, threads_per_block=256):
    bins = np.zeros(n_bins, dtype=np.int32)
    n = data.shape[0]
    if n > 0:
        blocks = (n + threads_per_block - 1) // threads_per_block
        histogram_kernel[blocks, threads_per_block](data, bins)
    return bins
