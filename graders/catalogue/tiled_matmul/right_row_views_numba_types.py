# verdict: pass
# why: conditional expressions for the loads, A[row][k] row views, numba.float32 as the shared dtype, cuda.grid(2)
import numba
import numpy as np
from numba import cuda

TILE = 16


@cuda.jit
def tiled_matmul(A, B, C):
    col, row = cuda.grid(2)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    a_tile = cuda.shared.array(shape=(TILE, TILE), dtype=numba.float32)
    b_tile = cuda.shared.array(shape=(TILE, TILE), dtype=numba.float32)
    n_rows, inner = A.shape[0], A.shape[1]
    n_cols = B.shape[1]
    total = 0.0
    for base in range(0, inner, TILE):
        a_tile[ty][tx] = A[row][base + tx] if (row < n_rows and base + tx < inner) else 0.0
        b_tile[ty][tx] = B[base + ty][col] if (base + ty < inner and col < n_cols) else 0.0
        cuda.syncthreads()
        for j in range(TILE):
            total += a_tile[ty][j] * b_tile[j][tx]
        cuda.syncthreads()
    if row < n_rows and col < n_cols:
        C[row][col] = total


def launch_tiled_matmul(A, B):
    rows, cols = A.shape[0], B.shape[1]
    C = np.empty((rows, cols), np.float32)
    blocks = (-(-cols // TILE), -(-rows // TILE))
    tiled_matmul[blocks, (TILE, TILE)](A, B, C)
    return C
