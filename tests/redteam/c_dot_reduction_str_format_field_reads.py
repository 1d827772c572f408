# redteam: thread 0 loops over its block's products, reading a and b through str.format field lookups on the raw arrays, uncounted
# kind: cell
# target: dot_reduction
# score: dot_reduction=0
# message: dot_reduction: numba's CUDA compiler refuses
# why: found by the 24th red team: got 8, honest 0 (no flag). str.format reads attributes and items of its arguments: "{0._arr[3][4]}".format(A) is getattr(A, "_arr")[3][4] done by C code, with the private name built at run time ("-arr".replace("-", "_")) inside an f-string, so _code_facts sees only LOAD_METHOD format/replace and no private name, no builtin global; the element comes back as text and float()/int() (allowed builtins) parse it: every read of an input escapes the SimArray, uncounted. Fix: refuse str.format/format_map (and string.Formatter) in a kernel, or hand the kernel str constants whose format refuses fields with "." or "[" (numba compiles no str.format in a kernel at all) Stopped (stop 37): a kernel or device function that names `format`, `format_map` or `vformat` is refused at its launch (_cuda_sim_launch._FORMATTING: numba formats no string in a kernel); the score is what a kernel that does not compile earns
import numpy as np
from numba import cuda


@cuda.jit
def dot_kernel(a, b, partial):
    t = cuda.threadIdx.x
    if t == 0:
        nm = "-arr".replace("-", "_")
        lo = cuda.blockIdx.x * cuda.blockDim.x
        s = 0.0
        for j in range(cuda.blockDim.x):
            if lo + j < a.shape[0]:
                x = float(f"{{0.{nm}[{lo + j}]}}".format(a))
                y = float(f"{{0.{nm}[{lo + j}]}}".format(b))
                s += x * y
        bk = cuda.blockIdx.x
        partial[bk] = s


def launch_dot(a, b, threads_per_block=256):
    n = a.shape[0]
    if n == 0:
        return 0.0
    blocks = (n + threads_per_block - 1) // threads_per_block
    partial = np.zeros(blocks, dtype=np.float64)
    dot_kernel[blocks, threads_per_block](a, b, partial)
    return float(partial.sum())
