# verdict: pass
# why: a fixed grid of at most 4 blocks and a grid-stride loop: fewer threads than elements is allowed
import numpy as np
from numba import cuda


@cuda.jit
def histogram_kernel(data, bins):
    start = cuda.grid(1)
    step = cuda.gridsize(1)
    for i in range(start, data.shape[0], step):
        cuda.atomic.add(bins, data[i], 1)


def launch_histogram(data, n_bins, threads_per_block=256):
    bins = np.zeros(n_bins, np.int32)
    if len(data):
        blocks = min(4, -(-len(data) // threads_per_block))
        histogram_kernel[blocks, threads_per_block](data, bins)
    return bins
