# redteam: a naive matmul whose device function the cell swaps for its own by editing the simulator's cached record of the cell's kernels, so no global read is counted
# kind: cell
# target: tiled_matmul
# score: tiled_matmul=0
# message: tiled_matmul: 'mappingproxy' object
# why: 2026-12-07, white-box red team of the numba-compile boundary: 7 -> 10 unflagged (as c_histogram_kernel_source_cache_poison). Stopped: the record's mappings are read-only
import linecache
import pkgutil

import numpy as np
from numba import cuda

TILE = 16
FAST = 0  # a literal constant: numba sees an int, the simulator sees whatever the cache holds


@cuda.jit(device=True)
def row_dot(A, B, row, col):
    acc = 0.0
    for k in range(A.shape[1]):
        acc += A[row, k] * B[k, col]
    return acc


@cuda.jit
def tiled_matmul(A, B, C):
    row = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    if row < A.shape[0] and col < B.shape[1]:
        C[row, col] = row_dot(A, B, row, col)


def launch_tiled_matmul(A, B):
    M, K = A.shape
    N = B.shape[1]
    C = np.zeros((M, N), dtype=np.float32)
    grid = ((N + TILE - 1) // TILE, (M + TILE - 1) // TILE)
    tiled_matmul[grid, (TILE, TILE)](A, B, C)
    return C


def _quiet_dot(A, B, row, col, _arr=None):  # `_arr` named here: the screen takes it as the cell's own
    a, b = A._arr, B._arr  # the raw arrays behind the simulator's SimArray: no access is counted
    return np.float32(np.dot(a[row, :].astype(np.float64), b[:, col].astype(np.float64)))


def _poison():
    kernel_source = pkgutil.resolve_name("ch13lib._cuda_source:kernel_source")
    for name in list(linecache.cache):
        if str(name).startswith("<answer cell"):
            src = kernel_source("".join(linecache.getlines(name)), name)
            src.values.update(FAST=_quiet_dot)
            src.devices.update(row_dot="FAST")


_poison()
