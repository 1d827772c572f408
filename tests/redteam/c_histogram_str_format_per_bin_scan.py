# redteam: no atomics: one thread per bin scans all of data (read through str.format field lookups on the raw array, uncounted) and stores its bin once
# kind: cell
# target: histogram
# score: histogram=0
# message: histogram: numba's CUDA compiler refuses
# why: found by the 24th red team: got 8, honest 0 (no flag). str.format reads attributes and items of its arguments: "{0._arr[3][4]}".format(A) is getattr(A, "_arr")[3][4] done by C code, with the private name built at run time ("-arr".replace("-", "_")) inside an f-string, so _code_facts sees only LOAD_METHOD format/replace and no private name, no builtin global; the element comes back as text and float()/int() (allowed builtins) parse it: every read of an input escapes the SimArray, uncounted. Fix: refuse str.format/format_map (and string.Formatter) in a kernel, or hand the kernel str constants whose format refuses fields with "." or "[" (numba compiles no str.format in a kernel at all) Stopped (stop 37): a kernel or device function that names `format`, `format_map` or `vformat` is refused at its launch (_cuda_sim_launch._FORMATTING: numba formats no string in a kernel); the score is what a kernel that does not compile earns
import numpy as np
from numba import cuda


@cuda.jit
def histogram_kernel(data, bins):
    i = cuda.grid(1)
    nm = "-arr".replace("-", "_")
    j = i
    while j < bins.shape[0]:
        c = 0
        for k in range(data.shape[0]):
            if int(f"{{0.{nm}[{k}]}}".format(data)) == j:
                c += 1
        bins[j] = c
        j += cuda.gridsize(1)


def launch_histogram(data, n_bins, threads_per_block=256):
    bins = np.zeros(n_bins, dtype=np.int32)
    n = data.shape[0]
    if n > 0:
        blocks = (n + threads_per_block - 1) // threads_per_block
        histogram_kernel[blocks, threads_per_block](data, bins)
    return bins
