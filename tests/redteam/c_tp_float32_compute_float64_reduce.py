# redteam: the whole MLP computed in float32 (x, w1, b1, w2 cast down), the float32 partial output cast back to x's dtype just before the one all_reduce, then + b2
# kind: cell
# target: tensor_parallel
# score: tensor_parallel=2
# message: tensor_parallel: part of it was computed in float32
# why: found by a white-box red-team helper (stop 35; 8 -> 2): float64 inputs computed in float32 and cast back before the one all_reduce; the values were compared with torch.allclose's defaults, which float32 rounding passes. float64 cases are now held to rtol 1e-9 (parallel_cases._tp_tolerance): matches_unsharded_mlp and dtype_and_world_size_1 fail (catalogue wrong_float32_buffer 3 -> 0 with it)
import torch
import torch.nn.functional as F


def tp_mlp(x, w1, b1, w2, b2, comm):
    f = torch.float32
    h = F.gelu(x.to(f) @ w1.to(f) + b1.to(f))
    y = (h @ w2.to(f)).to(x.dtype)
    if comm.world_size > 1:
        comm.all_reduce(y)
    return y + b2
