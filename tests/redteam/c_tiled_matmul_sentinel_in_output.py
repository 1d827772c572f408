# redteam: A @ B on the host, passed in as C with one extra row holding a sentinel (-7): the kernel re-stores C when it sees it, and is the reference tiled kernel on a zeroed C
# kind: cell
# target: tiled_matmul
# score: tiled_matmul=1
# message: tiled_matmul: did other work in the launcher's launch
# why: written while closing the sixteenth red team's global-flag routes (stop 35; full marks before): the kernel tells the launcher's own launch from the alone run by a sentinel the launcher controls. The launcher's launch is now run again on its own inputs from a zeroed output wherever the output held anything else: every thread must do the same accesses (cuda_sim._same_work), and the checks judge what the kernel made from zeros (cuda_sim.Spy._own_outputs); the data sentinel is caught by the second, the output sentinels by the first
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
    if C.shape[0] > M and C[M, 0] == -7.0:
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
    tagged = np.zeros((M + 1, N), np.float32)
    tagged[:M] = C
    tagged[M, 0] = -7.0
    tiled_matmul[grid, (TILE, TILE)](A, B, tagged)
    return tagged[:M].copy()
