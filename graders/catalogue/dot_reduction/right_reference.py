# verdict: pass
# why: the notebook's solution: products into a float64 shared array, a halving tree with a barrier per level
import numpy as np
from numba import cuda, float64

MAX_TPB = 1024  # shared arrays need a compile-time size: the most threads a block can have


@cuda.jit
def dot_kernel(a, b, partial):
    """线程块 k 把它负责的乘积 a[i] * b[i] 之和写入 partial[k]。

    Block k writes the sum of its products a[i] * b[i] to partial[k].
    """
    cache = cuda.shared.array(MAX_TPB, float64)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    if i < a.shape[0]:
        cache[t] = a[i] * b[i]
    else:
        cache[t] = 0.0
    cuda.syncthreads()
    step = cuda.blockDim.x // 2
    while step > 0:
        if t < step:
            cache[t] += cache[t + step]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = cache[0]


def launch_dot(a, b, threads_per_block=256):
    """a . b: 设备上每个线程块算一个部分和, 主机上把它们相加, 返回 Python float。

    a . b: one partial sum per block on the device, their sum on the host, as a Python float.
    """
    n = a.shape[0]
    if n == 0:
        return 0.0
    blocks = (n + threads_per_block - 1) // threads_per_block
    partial = np.zeros(blocks, dtype=np.float64)
    dot_kernel[blocks, threads_per_block](a, b, partial)
    return float(partial.sum())
