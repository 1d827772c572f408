# verdict: fail
# message: a tiled kernel reads at most
# why: a correct but naive kernel: every thread reads a whole row of A and column of B from global memory
import numpy as np
from numba import cuda

TILE = 16


@cuda.jit
def tiled_matmul(A, B, C):
    row = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    if row < A.shape[0] and col < B.shape[1]:
        acc = 0.0
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


def launch_tiled_matmul(A, B):
    M, K = A.shape
    N = B.shape[1]
    C = np.zeros((M, N), dtype=np.float32)
    grid = ((N + TILE - 1) // TILE, (M + TILE - 1) // TILE)
    tiled_matmul[grid, (TILE, TILE)](A, B, C)
    return C
