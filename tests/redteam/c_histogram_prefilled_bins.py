# redteam: np.bincount passed in as bins to a kernel that does nothing
# kind: cell
# target: histogram
# score: histogram=0
# message: histogram: came from the host
# why: found by a white-box red-team helper (stop 34: 8 -> 0, no flag): the launcher's return was checked against what the kernel left, not what bins held when it started; the kernel now also runs alone, on data the launcher never saw and zeroed bins, with the lost-update and share checks (cuda_check._check_histogram_kernel_alone; it also stops a plain bins[v] += 1 split over launches so that no bin is hit twice in one); since stop 35 the launcher's own launch fails first: what its output held before the launch is not what the kernel makes from zeros (cuda_sim.Spy._own_outputs)
import numpy as np
from numba import cuda


@cuda.jit
def histogram_kernel(data, bins):
    i = cuda.grid(1)
    if i < data.shape[0]:
        pass


def launch_histogram(data, n_bins, threads_per_block=256):
    n = data.shape[0]
    bins = np.bincount(data, minlength=n_bins).astype(np.int32)
    if n > 0:
        blocks = (n + threads_per_block - 1) // threads_per_block
        histogram_kernel[blocks, threads_per_block](data, bins)
    return bins
