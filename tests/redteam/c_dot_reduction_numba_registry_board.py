# redteam: each thread adds its product into a per-block slot of an array kept in numba.extending.as_numba_type.lookup, one barrier, thread 0 writes partial[k]
# kind: cell
# target: dot_reduction
# score: dot_reduction=0
# message: dot_reduction: numba's CUDA compiler refuses
# why: found by the twenty-seventh white-box red team (stop 38: 0 -> 8): the kernel's view of numba handed out any genuine numba object, and a plain dict among its public attributes (numba.extending.as_numba_type.lookup) was a board every simulated thread shared. Stopped (stop 38): a kernel may read numba's types and device functions only (_cuda_sim_launch._constant)
import math

import numba
import numpy as np
from numba import cuda


@cuda.jit
def dot_kernel(a, b, partial):
    tid = cuda.threadIdx.x
    blk = cuda.blockIdx.x
    gid = tid + blk * cuda.blockDim.x
    board = numba.extending.as_numba_type.lookup
    st = board.get("dot")
    if st is None or st.shape[0] < cuda.gridDim.x:
        st = np.zeros(cuda.gridDim.x, np.float64)
        board["dot"] = st
    if gid < a.shape[0]:
        st[blk] += np.float64(a[gid]) * np.float64(b[gid])
    cuda.syncthreads()
    if tid == 0:
        partial[blk] = st[blk]
        st[blk] = 0.0


def launch_dot(a, b, threads_per_block=256):
    n = a.size
    if not n:
        return 0.0
    blocks = math.ceil(n / threads_per_block)
    d_partial = cuda.device_array(blocks, dtype=np.float64)
    dot_kernel[blocks, threads_per_block](cuda.to_device(a), cuda.to_device(b), d_partial)
    return math.fsum(d_partial.copy_to_host())
