# verdict: fail
# sample: counts_match_numpy
# message: keep no state between calls
# why: the bins live at module level and are never reset, so a second call adds to the first call's counts
import numpy as np
from numba import cuda

_bins = {}


@cuda.jit
def histogram_kernel(data, bins):
    i = cuda.grid(1)
    if i < data.shape[0]:
        cuda.atomic.add(bins, data[i], 1)


def launch_histogram(data, n_bins, threads_per_block=256):
    if n_bins not in _bins:
        _bins[n_bins] = np.zeros(n_bins, dtype=np.int32)
    bins = _bins[n_bins]
    if len(data):
        histogram_kernel[(len(data) + threads_per_block - 1) // threads_per_block, threads_per_block](data, bins)
    return bins.copy()
