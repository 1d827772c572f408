# verdict: pass
# why: one block and a grid-stride loop that reads data[i] again to check its range before the atomic add: many elements per thread, three global accesses each, still a fair share (the share check must allow it)
import numpy as np
from numba import cuda


@cuda.jit
def histogram_kernel(data, bins):
    for i in range(cuda.grid(1), data.shape[0], cuda.gridsize(1)):
        if 0 <= data[i] < bins.shape[0]:
            cuda.atomic.add(bins, data[i], 1)


def launch_histogram(data, n_bins, threads_per_block=256):
    bins = np.zeros(n_bins, np.int32)
    if len(data):
        histogram_kernel[1, threads_per_block](data, bins)
    return bins
