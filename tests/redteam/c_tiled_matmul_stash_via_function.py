# redteam: c_tiled_matmul_global_list_stash with the list read through a plain Python helper function the kernel calls
# kind: cell
# target: tiled_matmul
# score: tiled_matmul=0
# message: tiled_matmul: not a device function
# why: found while closing c_tiled_matmul_global_list_stash (stop 33): a plain Python function was allowed as a kernel's global, and through it the kernel read the list. numba calls only device functions from a kernel; the simulator now refuses the rest
import numpy as np
from numba import cuda

TILE = 16
_AB = []


def _get():
    return _AB[0], _AB[1]


@cuda.jit
def tiled_matmul(A, B, C):
    row = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    a, b = _get()
    if row < a.shape[0] and col < b.shape[1]:
        acc = 0.0
        for k in range(a.shape[1]):
            acc += a[row, k] * b[k, col]
        C[row, col] = acc


def launch_tiled_matmul(A, B):
    M, K = A.shape
    N = B.shape[1]
    C = np.zeros((M, N), dtype=np.float32)
    _AB[:] = [A, B]
    grid = ((N + TILE - 1) // TILE, (M + TILE - 1) // TILE)
    tiled_matmul[grid, (TILE, TILE)](A, B, C)
    return C
