# redteam: a naive kernel (no shared memory, no barrier) that caches every element of A and B it reads in two lists kept in the public slot `dtype` of the C SimArray, so the whole launch reads each element from global memory once
# kind: cell
# target: tiled_matmul
# score: tiled_matmul=0
# message: tiled_matmul: numba's CUDA compiler refuses
# why: found by the twenty-ninth white-box red team (7 -> 10, no flag): the traffic check counts SimArray reads, and a Python list stored on a SimArray's public slot (C.dtype = (...)) is a launch-wide cache no access of which is counted; the naive kernel passes global_traffic. Should stop it: the simulator refuses every attribute store in a kernel (_cuda_sim_launch._code_facts) and SimArray refuses __setattr__ after construction. Stopped (stop 39): any STORE_ATTR or DELETE_ATTR in a kernel or device function is refused (_cuda_sim_launch._code_facts), as numba compiles none
import numpy as np
from numba import cuda

TILE = 16


@cuda.jit
def tiled_matmul(A, B, C):
    row = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    M, K = A.shape
    N = B.shape[1]
    if cuda.blockIdx.x == 0 and cuda.blockIdx.y == 0 and cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0:
        C.dtype = ([None] * (M * K), [None] * (K * N))  # a cache every simulated thread shares
    a_seen, b_seen = C.dtype
    if row < M and col < N:
        acc = 0.0
        for k in range(K):
            a = a_seen[row * K + k]
            if a is None:
                a = A[row, k]
                a_seen[row * K + k] = a
            b = b_seen[k * N + col]
            if b is None:
                b = B[k, col]
                b_seen[k * N + col] = b
            acc += a * b
        C[row, col] = acc


def launch_tiled_matmul(A, B):
    M, K = A.shape
    N = B.shape[1]
    C = np.zeros((M, N), dtype=np.float32)
    grid = ((N + TILE - 1) // TILE, (M + TILE - 1) // TILE)
    tiled_matmul[grid, (TILE, TILE)](A, B, C)
    return C
