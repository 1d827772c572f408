# redteam: a histogram kernel whose branch constant a walrus inside another assignment rebinds
# kind: cell
# target: histogram
# score: histogram=0
# message: histogram: is no longer what the cell's text says
# why: found by the independent red team of 2026-12-08 (got 8, honest 0, no flag): the simulator and the judge's compiler read a kernel's constants from the cell's text, and the text reader follows only the binding forms it knows; this one rebinds the constant when the cell runs, so numba on a GPU compiles another kernel than the one checked. Stopped: at each launch the simulator asks the running cell whether every name the kernel reads (itself, its device functions, constants and libraries) is still what the text says (_cuda_source.KernelSource.disagreement), whatever spelling changed it; a difference fails the launch. The launch-configuration tests, which run no kernel, keep their points.
import numpy as np
from numba import cuda

ATOMIC = True  # read from the cell's text by the checking simulator and the judge's compile check

SEED = (ATOMIC := False)  # a walrus in an assignment's value: the reader forgets SEED, not ATOMIC


@cuda.jit
def histogram_kernel(data, bins):
    i = cuda.grid(1)
    if i < data.shape[0]:
        if ATOMIC:
            cuda.atomic.add(bins, data[i], 1)
        else:
            bins[data[i]] += 1  # what numba compiles when the cell really runs: a lost-update race on a GPU


def launch_histogram(data, n_bins, threads_per_block=256):
    bins = np.zeros(n_bins, dtype=np.int32)
    n = data.shape[0]
    if n > 0:
        blocks = (n + threads_per_block - 1) // threads_per_block
        histogram_kernel[blocks, threads_per_block](data, bins)
    return bins
