# redteam: bins[v] += 1 without an atomic, on the simulator's raw array, inside a device function the kernel reaches through its closure (a kernel made by a factory function)
# kind: cell
# target: histogram
# score: histogram=0
# message: histogram: is not a kernel defined with @cuda.jit at the top of the cell
# why: white-box red team 20: _cuda_sim_launch._rebind checks (_check_captured/_check_code) and rebinds only the kernel itself and the device functions among the globals it names; a device function held in a closure cell (or a tuple global, or a default) passes _constant (a FakeCUDAKernel is "genuinely numba's") and is called as-is, unchecked, so its `.__getstate__()` reaches SimArray's raw array: the racy plain increment goes around the access record (no lost-update, no traffic) and scores 8/8. Stopped (stop 36): every device function a kernel can reach (a global, in a closure, a default, a tuple) is held to the same checks (_cuda_sim_launch._check_captured)
import numpy as np
from numba import cuda


def _make():
    @cuda.jit(device=True)
    def bump(bins, v):
        raw = next(iter(bins.__getstate__()[1].values()))
        raw[v] += 1

    @cuda.jit
    def histogram_kernel(data, bins):
        i = cuda.grid(1)
        if i < data.shape[0]:
            bump(bins, data[i])

    return histogram_kernel


histogram_kernel = _make()


def launch_histogram(data, n_bins, threads_per_block=256):
    bins = np.zeros(n_bins, dtype=np.int32)
    n = data.shape[0]
    if n > 0:
        blocks = (n + threads_per_block - 1) // threads_per_block
        histogram_kernel[blocks, threads_per_block](data, bins)
    return bins
