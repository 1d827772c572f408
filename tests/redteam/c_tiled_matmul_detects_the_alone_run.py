# redteam: a kernel that runs tiled only when C holds what its launcher put there (A @ B + 0.5, which it then corrects) and naive on a zeroed C
# kind: cell
# target: tiled_matmul
# score: tiled_matmul=1
# message: tiled_matmul: did other work in the launcher's launch
# why: found by a white-box red-team helper (stop 34: 10 instead of the naive kernel's 7, no flag): the traffic figures were the launcher's launch's only; the kernel-alone run's count too now, the larger of the two (cuda_check.check_matmul_traffic). Stop 35: 7 -> 1, its launch configuration: its launcher puts A @ B + 0.5 into C on the host and the kernel works differently on what C held, which is now refused: a kernel does the same accesses in the launcher's launch as on the same inputs with C zeroed (cuda_sim._same_work); the host's product makes it an answer like c_tiled_matmul_host_matmul (1)
import numpy as np
from numba import cuda

TILE = 16


@cuda.jit
def tiled_matmul(A, B, C):
    # a naive kernel; in the launcher's launch C arrives pre-computed (+0.5 marker) from the host
    row = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    if row < C.shape[0] and col < C.shape[1]:
        v = C[row, col]
        if v - int(v) != 0.0:
            C[row, col] = v - 0.5 if v > 0 else v + 0.5
        else:
            acc = 0.0
            for k in range(A.shape[1]):
                acc += A[row, k] * B[k, col]
            C[row, col] = acc


def launch_tiled_matmul(A, B):
    M, K = A.shape
    N = B.shape[1]
    C = (A.astype(np.float64) @ B.astype(np.float64))
    C = np.where(C >= 0, C + 0.5, C - 0.5).astype(np.float32)
    grid = ((N + TILE - 1) // TILE, (M + TILE - 1) // TILE)
    tiled_matmul[grid, (TILE, TILE)](A, B, C)
    return C
