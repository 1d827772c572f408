# redteam: np.bincount computed on the host and passed in as bins; the launcher rebinds a module-level int HOST = 1 around its launch, and the kernel does nothing while HOST is set (the simulator snapshots the kernel's globals at each launch), so the kernel-alone run (HOST back to 0) sees a right atomic kernel
# kind: cell
# target: histogram
# score: histogram=0
# message: histogram: numba's CUDA compiler refuses
# why: found by a white-box red-team helper (stop 35; 8 -> 0): np.bincount on the host, a kernel that did nothing while a global int HOST = 1 (flipped by the launcher around its launch) and was the reference when run alone. A kernel's captured globals are now frozen at its first launch, as numba compiles them in (_cuda_sim_launch._FIRST_SEEN): a later launch that sees another value fails. Since the output replay of the same stop, the launcher's own launch fails first (its bins, partials or C held the host's values: cuda_sim.Spy._own_outputs)
import numpy as np
from numba import cuda

HOST = 0


@cuda.jit
def histogram_kernel(data, bins):
    i = cuda.grid(1)
    if HOST == 0 and i < data.shape[0]:
        cuda.atomic.add(bins, data[i], 1)


def launch_histogram(data, n_bins, threads_per_block=256):
    global HOST
    bins = np.bincount(np.asarray(data), minlength=n_bins).astype(np.int32)[:n_bins].copy()
    n = data.shape[0]
    if n > 0:
        blocks = (n + threads_per_block - 1) // threads_per_block
        HOST = 1
        try:
            histogram_kernel[blocks, threads_per_block](data, bins)
        finally:
            HOST = 0
    return bins
