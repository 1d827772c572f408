# redteam: bins[v] += 1 without an atomic, on the simulator's raw array (bins._arr), after defining _arr on a helper class of its own
# kind: cell
# target: histogram
# score: histogram=0
# message: histogram: numba's CUDA compiler refuses
# why: white-box red team 18: the screen takes a private name the cell sets on self as "its own", so `bins._arr` on the simulator's SimArray is neither refused nor flagged; the plain read-modify-write goes around the access record (no lost-update, no race, no traffic) and the racy kernel scores full marks. Stopped (stop 36): a kernel or device function that names a private or special attribute, or calls a builtin numba does not compile (getattr, vars, type, list...), is refused at its launch (_cuda_sim_launch._check_code); numba compiles neither, so the score is what a kernel that does not compile earns
import numpy as np
from numba import cuda


class _Counts:
    def __init__(self, arr):
        self._arr = arr


@cuda.jit
def histogram_kernel(data, bins):
    i = cuda.grid(1)
    if i < data.shape[0]:
        bins._arr[data[i]] += 1


def launch_histogram(data, n_bins, threads_per_block=256):
    bins = np.zeros(n_bins, dtype=np.int32)
    n = data.shape[0]
    if n > 0:
        blocks = (n + threads_per_block - 1) // threads_per_block
        histogram_kernel[blocks, threads_per_block](data, bins)
    return bins
