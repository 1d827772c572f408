# redteam: a naive kernel that reads A and B raw through a device function held in a tuple global (HELPERS[0](A)), uncounted
# kind: cell
# target: tiled_matmul
# score: tiled_matmul=0
# message: tiled_matmul: numba's CUDA compiler refuses
# why: white-box red team 20: _cuda_sim_launch._rebind rebinds and checks only device functions that are themselves globals the kernel names; a tuple of device functions is a _constant (FakeCUDAKernel is numba's), so the device function inside it is never passed through _check_code and its `X.__getstate__()` hands back SimArray's raw array; the naive kernel counts no global reads and passes global_traffic (10/10). Stopped (stop 36): every device function a kernel can reach (a global, in a closure, a default, a tuple) is held to the same checks (_cuda_sim_launch._check_captured)
import numpy as np
from numba import cuda

TILE = 16


@cuda.jit(device=True)
def raw(X):
    return next(iter(X.__getstate__()[1].values()))


HELPERS = (raw,)


@cuda.jit
def tiled_matmul(A, B, C):
    row = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    a = HELPERS[0](A)
    b = HELPERS[0](B)
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
