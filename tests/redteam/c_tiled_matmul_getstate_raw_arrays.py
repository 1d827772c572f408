# redteam: a naive kernel that reads the simulator's raw arrays through SimArray.__getstate__(), uncounted, no private name spelled
# kind: cell
# target: tiled_matmul
# score: tiled_matmul=0
# message: tiled_matmul: numba's CUDA compiler refuses
# why: white-box red team 18: on Python 3.11 every object has __getstate__, which hands a slotted object's slots back as a dict; the first is the SimArray's raw numpy array, so the naive kernel reads A and B with no counted global reads and passes global_traffic; nothing in the cell is refused or flagged (a dunder, no private name). Stopped (stop 36): a kernel or device function that names a private or special attribute, or calls a builtin numba does not compile (getattr, vars, type, list...), is refused at its launch (_cuda_sim_launch._check_code); numba compiles neither, so the score is what a kernel that does not compile earns
import numpy as np
from numba import cuda

TILE = 16


@cuda.jit
def tiled_matmul(A, B, C):
    row = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    a = next(iter(A.__getstate__()[1].values()))
    b = next(iter(B.__getstate__()[1].values()))
    if row < A.shape[0] and col < B.shape[1]:
        acc = 0.0
        for k in range(A.shape[1]):
            acc += a[row, k] * b[k, col]
        C[row, col] = acc


def launch_tiled_matmul(A, B):
    M, K = A.shape
    N = B.shape[1]
    C = np.zeros((M, N), dtype=np.float32)
    grid = ((N + TILE - 1) // TILE, (M + TILE - 1) // TILE)
    tiled_matmul[grid, (TILE, TILE)](A, B, C)
    return C
