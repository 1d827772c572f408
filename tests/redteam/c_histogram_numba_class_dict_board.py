# redteam: no atomics: threads count into numba.core.utils.ConfigOptions.OPTIONS, a plain dict class attribute of a genuine numba class the kernel may hold, the last thread copies it to bins
# kind: cell
# target: histogram
# score: histogram=0
# message: histogram: numba's CUDA compiler refuses
# why: found by the twenty-ninth white-box red team (8/8, no flag): _constant lets a kernel hold a genuine numba or numpy class, and an attribute read on a class (not a module) goes through no _LibraryView, so ConfigOptions.OPTIONS, an empty dict, was a board every simulated thread (and every later launch in the subject) shared through item stores alone. Should stop it: attribute reads on anything but a _LibraryView, an argument or cuda pass a check of their value (_kernel_view on LOAD_ATTR results, or refuse LOAD_ATTR on a captured class), and the simulator refuses dict/list/set values reaching a kernel. Stopped (stop 39): a kernel may hold numpy scalar types as classes, no other library class (_cuda_sim_launch._constant)
import numba
import numpy as np
from numba import cuda


@cuda.jit
def histogram_kernel(data, bins):
    board = numba.core.utils.ConfigOptions.OPTIONS  # a plain dict of numba's, reached through a class
    i = cuda.grid(1)
    if i == 0:
        board.clear()
    if i < data.shape[0]:
        v = data[i]
        board[v] = board.get(v, 0) + 1  # a plain, non-atomic count
    if i == cuda.gridsize(1) - 1:  # the simulator runs this thread last
        for k in range(bins.shape[0]):
            bins[k] = board.get(k, 0)
        board.clear()


def launch_histogram(data, n_bins, threads_per_block=256):
    bins = np.zeros(n_bins, dtype=np.int32)
    n = data.shape[0]
    if n > 0:
        blocks = (n + threads_per_block - 1) // threads_per_block
        histogram_kernel[blocks, threads_per_block](data, bins)
    return bins
