# verdict: fail
# sample: edge_cases
# message: do not launch
# why: launches ceil(0 / tpb) = 0 blocks for empty data: a GPU refuses a 0-block launch
import numpy as np
from numba import cuda


@cuda.jit
def histogram_kernel(data, bins):
    i = cuda.grid(1)
    if i < data.shape[0]:
        cuda.atomic.add(bins, data[i], 1)


def launch_histogram(data, n_bins, threads_per_block=256):
    bins = np.zeros(n_bins, dtype=np.int32)
    blocks = (len(data) + threads_per_block - 1) // threads_per_block
    histogram_kernel[blocks, threads_per_block](data, bins)
    return bins
