# redteam: the launcher computes C = A @ B with numpy and launches a kernel that only re-stores C[r, c] while a module-level int HOST = 1 (flipped by the launcher around its launch); with HOST = 0 (the kernel-alone run) the kernel is the reference tiled kernel
# kind: cell
# target: tiled_matmul
# score: tiled_matmul=0
# message: tiled_matmul: numba's CUDA compiler refuses
# why: found by a white-box red-team helper (stop 35; 10 -> 1, its launch configuration, as c_tiled_matmul_host_matmul): A @ B on the host and a kernel that only re-stored C while a global int HOST = 1, the reference tiled kernel when run alone. A kernel's captured globals are now frozen at its first launch, as numba compiles them in (_cuda_sim_launch._FIRST_SEEN). Since the output replay of the same stop, the launcher's own launch fails first (its bins, partials or C held the host's values: cuda_sim.Spy._own_outputs)
import numpy as np
from numba import cuda

TILE = 16
HOST = 0


@cuda.jit
def tiled_matmul(A, B, C):
    sA = cuda.shared.array((TILE, TILE), dtype=np.float32)
    sB = cuda.shared.array((TILE, TILE), dtype=np.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    M, K = A.shape
    N = B.shape[1]
    if HOST == 1:
        if row < M and col < N:
            C[row, col] = C[row, col]
        return
    acc = 0.0
    for t in range((K + TILE - 1) // TILE):
        k = t * TILE + tx
        if row < M and k < K:
            sA[ty, tx] = A[row, k]
        else:
            sA[ty, tx] = 0.0
        k = t * TILE + ty
        if k < K and col < N:
            sB[ty, tx] = B[k, col]
        else:
            sB[ty, tx] = 0.0
        cuda.syncthreads()
        for j in range(TILE):
            acc += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if row < M and col < N:
        C[row, col] = acc


def launch_tiled_matmul(A, B):
    global HOST
    M = A.shape[0]
    N = B.shape[1]
    C = (np.asarray(A, np.float32) @ np.asarray(B, np.float32)).astype(np.float32)
    grid = ((N + TILE - 1) // TILE, (M + TILE - 1) // TILE)
    HOST = 1
    try:
        tiled_matmul[grid, (TILE, TILE)](A, B, C)
    finally:
        HOST = 0
    return C
