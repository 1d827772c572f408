# redteam: a matmul kernel that is tiled in the text and naive (global memory, no barriers) when the cell runs: a match capture rebinds its switch
# kind: cell
# target: tiled_matmul
# score: tiled_matmul=1
# message: tiled_matmul: is no longer what the cell's text says
# why: found by the independent red team of 2026-12-08 (got 10, honest 7, no flag): the simulator and the judge's compiler read a kernel's constants from the cell's text, and the text reader follows only the binding forms it knows; this one rebinds the constant when the cell runs, so numba on a GPU compiles another kernel than the one checked. Stopped: at each launch the simulator asks the running cell whether every name the kernel reads (itself, its device functions, constants and libraries) is still what the text says (_cuda_source.KernelSource.disagreement), whatever spelling changed it; a difference fails the launch. The launch-configuration tests, which run no kernel, keep their points.
import numpy as np
from numba import cuda

TILE = 16
TILED = True  # the text: tiles through shared memory

match False:  # the run: a naive kernel straight from global memory (TILED rebound, unseen by the reader)
    case TILED:
        pass


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
    acc = 0.0
    if not TILED:
        if row < M and col < N:
            for k in range(K):
                acc += A[row, k] * B[k, col]
            C[row, col] = acc
        return
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
    M, K = A.shape
    N = B.shape[1]
    C = np.zeros((M, N), dtype=np.float32)
    grid = ((N + TILE - 1) // TILE, (M + TILE - 1) // TILE)
    tiled_matmul[grid, (TILE, TILE)](A, B, C)
    return C
