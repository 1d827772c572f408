# redteam: a naive kernel reading A and B through a bound C method (a list's copy)
# kind: cell
# target: tiled_matmul
# score: tiled_matmul=0
# message: tiled_matmul: numba's CUDA compiler refuses
# why: found by a white-box red-team helper (stop 34: 10 -> 1, no flag): the captured-globals check took any class, any module, isinstance of int and any builtin function, and never looked at defaults; it now takes exact builtin types, tuples of them, the libraries' own modules (the very objects: math, cmath, numpy, numba and their submodules), their genuine classes and numba objects, builtin functions of those modules only, and checks defaults too (_cuda_sim_launch._constant)
import numpy as np
from numba import cuda

TILE = 16
_AB = []
_ab = _AB.copy


@cuda.jit
def tiled_matmul(A, B, C):
    ab = _ab()
    row = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    if len(ab):
        a, b = ab[0], ab[1]
    else:
        a, b = A, B
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
    _AB[:] = []
    return C
