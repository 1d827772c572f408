# verdict: pass
# why: a launcher that prints the kernel's __name__ before the launch (a real @cuda.jit kernel has one). Found by an honest-student helper: 2/10, when the kernel's stand-in while grading had no attributes at all; it now has __name__ and __qualname__
import math
import numpy as np
from numba import cuda


@cuda.jit
def vec_add(a, b, c, n):
    i = cuda.grid(1)
    if i < n:
        c[i] = a[i] + b[i]


def launch_vec_add(a: np.ndarray, b: np.ndarray, threads_per_block: int = 256) -> np.ndarray:
    """Add two vectors on the GPU; returns a new array."""
    assert a.shape == b.shape and a.ndim == 1
    n = a.shape[0]
    c = np.zeros_like(a)
    if n == 0:
        return c
    blocks = math.ceil(n / threads_per_block)
    print(f"launching {vec_add.__name__}[{blocks}, {threads_per_block}] for n={n}")
    vec_add[blocks, threads_per_block](a, b, c, n)
    return c
