# redteam: a naive kernel (2·K global reads per thread, no shared tiles) that reads A and B from a module-level list the launcher fills, not from its arguments
# kind: cell
# target: tiled_matmul
# score: tiled_matmul=0
# message: tiled_matmul: numba's CUDA compiler refuses
# why: found by a white-box red-team helper (stop 33: 10/10, no flag; 7 as wrong_naive_global): the simulator copied the kernel's globals as they were and counted only its arguments' accesses, so the global traffic was 0; numba compiles no such kernel. A kernel may now read only what numba would compile from globals and closures (modules, numbers, types, device functions, tuples of these): _cuda_sim_launch._check_captured
import numpy as np
from numba import cuda

TILE = 16
_AB = []


@cuda.jit
def tiled_matmul(A, B, C):
    row = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    a, b = _AB[0], _AB[1]
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
