# redteam: a histogram with an unguarded `bins[v] += 1` whose launcher sets the kernel stand-in's `mode` to "pass", so the launch runs on numba's simulator and the lost-update check never sees it
# kind: cell
# target: histogram
# score: histogram=0
# message: histogram: read and then wrote bins
# why: found by a white-box red-team helper (stop 26: tiled_matmul 7 -> 10, histogram 0 -> 8, vec_add 2 -> 8, vec_add_grid_stride 4 -> 5, dot_reduction 0 -> 8, none flagged): while a launcher ran, its kernel's global was the harness's Spy, whose records (launches, writer maps, per-thread counts), mode and fault were plain public attributes. The launcher now holds a handle with no attributes (ch13lib.cuda_sim.Spy.handle), and each launch's record is a copy made when the launch ended; the attack's own attribute access fails and is swallowed here, so the cell earns what its kernel earns
import numpy as np
from numba import cuda


@cuda.jit
def histogram_kernel(data, bins):
    i = cuda.grid(1)
    if i < data.shape[0]:
        bins[data[i]] += 1


def launch_histogram(data, n_bins, threads_per_block=256):
    bins = np.zeros(n_bins, dtype=np.int32)
    n = data.shape[0]
    if n > 0:
        blocks = (n + threads_per_block - 1) // threads_per_block
        try:  # the grading stand-in's attribute, where there is one
            histogram_kernel.mode = "pass"  # attribute of the grading stand-in (Spy): skip the checking simulator
        except AttributeError:
            pass
        histogram_kernel[blocks, threads_per_block](data, bins)
    return bins