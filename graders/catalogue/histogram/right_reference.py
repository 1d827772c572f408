# verdict: pass
# why: the notebook's solution: one thread per element, cuda.atomic.add into the global bins
import numpy as np
from numba import cuda


@cuda.jit
def histogram_kernel(data, bins):
    """把 data 的每个元素计入 bins[data[i]], 每个元素一个线程。

    Count every element of data into bins[data[i]], one thread per element.
    """
    i = cuda.grid(1)
    if i < data.shape[0]:
        cuda.atomic.add(bins, data[i], 1)


def launch_histogram(data, n_bins, threads_per_block=256):
    """返回一个新的 int32 数组: data 中各值的计数, 共 n_bins 个桶。

    Return a NEW int32 array of n_bins counts of the values in data.
    """
    bins = np.zeros(n_bins, dtype=np.int32)
    n = data.shape[0]
    if n > 0:
        blocks = (n + threads_per_block - 1) // threads_per_block
        histogram_kernel[blocks, threads_per_block](data, bins)
    return bins
