# verdict: pass
# why: launch configuration written as 1-tuples, n from a.shape, output made with np.empty(n, a.dtype)
import numpy as np
from numba import cuda


@cuda.jit
def vec_add(a, b, c, n):
    i = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    if 0 <= i and i < n:
        c[i] = b[i] + a[i]


def launch_vec_add(a: np.ndarray, b: np.ndarray, threads_per_block: int = 256) -> np.ndarray:
    (n,) = a.shape
    c = np.empty(n, dtype=a.dtype)
    if n > 0:
        grid = ((n - 1) // threads_per_block + 1,)
        vec_add[grid, (threads_per_block,)](a, b, c, n)
    return c
