# redteam: no atomics: threads count into an array set as an attribute of the kernel's numpy view, last thread writes bins
# kind: cell
# target: histogram
# score: histogram=0
# message: histogram: numba's CUDA compiler refuses
# why: found by the twenty-seventh white-box red team (stop 38: 0 -> 8): a kernel stored on its view of numpy (one object since the view caches what it hands out), a board every simulated thread shared. Stopped (stop 38): a library view refuses every store and delete (_LibraryView.__setattr__)
import numpy as np
from numba import cuda


@cuda.jit
def histogram_kernel(data, bins):
    i = cuda.grid(1)
    total = cuda.gridDim.x * cuda.blockDim.x
    try:
        st = np.tally
    except:  # noqa: E722
        st = np.zeros(bins.shape[0] + 1, np.int64)
        np.tally = st
    if i < data.shape[0]:
        st[data[i]] += 1
    st[bins.shape[0]] += 1
    if st[bins.shape[0]] == total:
        for k in range(bins.shape[0]):
            bins[k] = st[k]
        del np.tally


def launch_histogram(data, n_bins, threads_per_block=256):
    bins = np.zeros(n_bins, dtype=np.int32)
    n = data.shape[0]
    if n > 0:
        blocks = (n + threads_per_block - 1) // threads_per_block
        histogram_kernel[blocks, threads_per_block](data, bins)
    return bins
