"""Cases, references and verdicts for notebook 07 (pipeline, tensor and ZeRO parallelism).

A case fixes everything a run depends on (sizes, dtype, the seed of the values, the simulator's
schedule), so every failure replays exactly with the self-checks of ``ch13lib.parallel_checks``.

Grading splits in two (docs/design.md, "Judge and subject"): the harnesses of
``ch13lib.parallel_sim`` run the answer cell on the simulated process group (or a real gloo world)
and report plain observations (tensors, return values, the comm calls each rank made, the
schedule's ticks); the functions here regenerate the inputs from the case, compute the expected
values independently of the answer (a single-process full-batch step, the unsharded MLP,
averaged gradients + ``torch.optim.Adam``) and explain what is wrong.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from fractions import Fraction

import torch
import torch.nn.functional as F
from torch import nn

from ch13lib.cell import expected_got
from ch13lib.lang import Both, Messages

# What the verdicts say, in the course's language (ch13lib/lang.py). A case's label and its replay
# line are fields of these sentences (:meth:`PipeCase.label`, :func:`_call`): each language takes its side.
M = Messages(
    hidden_call=(
        "{call} (评分时用的是隐藏的值; 这里抽取的是大小与调度都相同的公开值)",
        "{call} (the grader's values were hidden ones; this draws public values of the same sizes and schedule)",
    ),
    replay=("重现: {replay}", "Replay: {replay}"),
    malformed=("{case}: 运行报告传回时格式有误", "{case}: the run's report came back malformed"),
    # labels
    pipe_label=(
        "P={P} 个阶段, m={m} 个微批次 (每个 {rows}), 宽度 {widths}, 损失 {loss}{pre}",
        "P={P} stages, m={m} micro-batches of {rows}, widths {widths}, loss {loss}{pre}",
    ),
    rows=("{n} 行", "{n} rows"),
    row=("{n} 行", "{n} row"),
    pre_filled=(", .grad 已预先填充", ", .grad pre-filled"),
    tp_label=(
        "W={W} 个 rank, x 的形状为 {shape}, 隐藏维度 {hidden}, d_out {d_out}, {dtype}",
        "W={W} ranks, x of shape {shape}, hidden {hidden}, d_out {d_out}, {dtype}",
    ),
    zero_label=(
        "W={W} 个 rank, {n} 个参数, 形状为 {shapes} (N={N}), {dtype}, {steps} 步, lr={lr}, betas={betas}, "
        "eps={eps}{tiny}",
        "W={W} ranks, {n} parameters of shapes {shapes} (N={N}), {dtype}, {steps} steps, lr={lr}, betas={betas}, "
        "eps={eps}{tiny}",
    ),
    tiny=(", 梯度约为 {g}", ", gradients ~{g}"),
    # pipeline: gradients and loss
    weight=("阶段 {r} 的 weight", "stage {r}'s weight"),
    bias=("阶段 {r} 的 bias", "stage {r}'s bias"),
    no_grad_mid=(
        "激活的梯度从未到达它: 除第一个阶段外, 每个阶段都要让收到的激活需要梯度 (x.requires_grad_()), "
        "在它上面运行本阶段, 并在本阶段的反向传播之后把 x.grad 发回前一个 rank, "
        "由前一个 rank 调用 out.backward(该梯度)。",
        "The gradient of the activations never reached it: on every stage but the first, make the "
        "received activation require grad (x.requires_grad_()), run the stage on it, and after its "
        "backward send x.grad back to the previous rank, which calls out.backward(that gradient).",
    ),
    no_grad_last=("对缩放后的各微批次损失调用 backward。", "Call backward on the scaled micro-batch losses."),
    no_grad=(
        "{case}: 调用之后 {what} 没有 .grad。\n{hint}\n重现: {replay}",
        "{case}: {what} has no .grad after the call.\n{hint}\nReplay: {replay}",
    ),
    grad_wrong=(
        "{case}: 调用之后 {what}.grad 是错的: {why}。\n重现: {replay}",
        "{case}: {what}.grad is wrong after the call: {why}.\nReplay: {replay}",
    ),
    grad_replaced=(
        "它只含本步的梯度。\n调用之前 .grad 中已有的内容丢失了。不要清零或替换 .grad "
        "(不要 zero_grad(), 不要 p.grad = ...); backward() 会在原有值上累加",
        "it holds this step's gradient only.\nthe .grad it had before the call is gone. Do not zero "
        "or replace .grad (no zero_grad(), no p.grad = ...); backward() accumulates on top of it",
    ),
    grad_unchanged_mid=(
        "它没有变化。\n这个阶段没有得到梯度 (激活在发送前被 detach 了, 或者发回的梯度从未用于 backward)",
        "it did not change.\nthis stage got no gradient (activations detached before being sent, "
        "or the gradient sent back was never used in a backward)",
    ),
    grad_unchanged_last=("它没有变化: 这个阶段没有运行 backward", "it did not change: no backward ran on this stage"),
    grad_times_m=(
        "它是全批次梯度的 {m}×。\n在 backward 之前把每个微批次的损失乘以 1/n_micro (loss_fn 在一个微批次上取均值, "
        "再对 m 个微批次求和, 得到的是均值的 m 倍)",
        "it is {m}× the full-batch gradient.\nscale each micro-batch's loss by 1/n_micro before its "
        "backward (loss_fn's mean over a micro-batch, summed over m micro-batches, is m times the mean)",
    ),
    grad_over_m=(
        "它是全批次梯度的 1/{m}: 损失被乘了两次 1/n_micro",
        "it is 1/{m} of the full-batch gradient: the losses were scaled by 1/n_micro twice",
    ),
    grad_elements=(
        "{n} 个元素中有 {bad} 个与整个模型的一次全批次步骤不同; 第一个在扁平下标 {k}: {eg}",
        "{bad} of {n} elements differ from one full-batch step of the whole model; the first at flat index {k}: {eg}",
    ),
    not_last_returned=(
        "{case}: rank {r} 返回了 {v}; 只有 rank P-1 返回损失, 其他每个 rank 都返回 None。\n重现: {replay}",
        "{case}: rank {r} returned {v}; only rank P-1 returns the loss, every other rank None.\nReplay: {replay}",
    ),
    last_returned=(
        "{case}: rank {r} (最后一个阶段) 返回了 {v}, 而不是 Python float 形式的平均损失 (loss.item())。\n"
        "重现: {replay}",
        "{case}: rank {r} (the last stage) returned {v}, not the mean loss as a Python float (loss.item()).\n"
        "Replay: {replay}",
    ),
    loss_summed=(
        "它是平均损失的 {m}×。\n各微批次的损失被求和而不是取平均 (把每个都乘以 1/n_micro)",
        "it is {m}× the mean loss.\nthe micro-batch losses were summed, not averaged (scale each by 1/n_micro)",
    ),
    loss_mean=("{want} (loss_fn 在整个批次上的均值)", "{want} (loss_fn's mean over the whole batch)"),
    loss_wrong=(
        "{case}: 返回的损失是错的: {why}。\n重现: {replay}",
        "{case}: the returned loss is wrong: {why}.\nReplay: {replay}",
    ),
    a_tensor=("一个张量 ({value})", "a tensor ({value})"),
    a_type=("一个 {type}", "a {type}"),
    # pipeline: the schedule
    chart_cut=("(只显示 {length} 个 tick 中的前 {n} 个)", "(first {n} of {length} ticks)"),
    forward=("前向", "forward"),
    backward=("反向", "backward"),
    stage_work=(
        "{case}: rank {r} 的阶段只对 {done} 个微批次的行运行了{name}, 而不是 {m} 个。\n"
        "每个微批次的前向和反向都要调用阶段本身 (stage(x)); "
        "运行在它内部找到的某个模块, 或者手工用它的参数计算, 都会跳过调度所度量的工作。\n重现: {replay}",
        "{case}: rank {r}'s stage ran {name} on {done} micro-batches' worth of rows, not {m}.\ncall the stage itself "
        "(stage(x)) for the forward and backward of every micro-batch; running a module found inside it, or its "
        "parameters by hand, skips the work the schedule is measured on.\nReplay: {replay}",
    ),
    serial=(
        "2·P·m 个 tick: 任何两个阶段都从未同时工作 "
        "(一次处理整个批次, 或者一个微批次完整地前向再反向之后才开始下一个)。\n",
        "2·P·m ticks: no two stages ever work at the same time (the whole batch at once, or one "
        "micro-batch all the way forward and back before the next starts).\n",
    ),
    too_long=(
        "调度太长: {case}: 它用了 {took} 个 tick, GPipe 只需 2(m + P − 1) = 2({m} + {P} − 1) = {bound}。\n{hint}"
        "每个阶段应在微批次 i 一到达就对它做前向并立即传给下一个阶段, 然后在各个梯度到达时运行反向传播 "
        "(F = 前向, B = 该微批次的反向, . = 空闲):",
        "the schedule is too long: {case}: it took {took} ticks, GPipe takes 2(m + P − 1) = 2({m} + {P} − 1) = "
        "{bound}.\n{hint}Every stage should forward micro-batch i as soon as it arrives and pass it on at once, then "
        "run the backward passes as their gradients arrive (F = forward, B = backward of that micro-batch, . = idle):",
    ),
    # pipeline: the data flow of a relayed world
    acts_from=("来自 rank {src} 的激活", "activations from rank {src}"),
    grads_from=("来自 rank {src} 的梯度", "gradients from rank {src}"),
    ran_before_data=(
        "{case}: rank {r} 的阶段对 {n} 行运行了{name}, 而当时它只收到了 {had} 行{side}。\n请在拿到收到的数据时, "
        "在这些数据上调用阶段 (在别的数据上运行阶段、再手工完成真正的计算, 不算流水线的工作)。\n重现: {replay}",
        "{case}: rank {r}'s stage ran {name} on {n} row(s) while it had received {side} for only {had}.\ncall the "
        "stage on the data you received, when you have it (a stage run on other data, with the real work done by "
        "hand, is not the pipeline's work).\nReplay: {replay}",
    ),
    activations=("激活", "activations"),
    gradients=("梯度", "gradients"),
    sent_before_run=(
        "{case}: rank {r} 向 rank {dst} 发送了 {n} 行{what}, 而当时它的阶段的{name}只运行了 {ran} 行: "
        "请发送阶段算出的结果, 并且在算出之后再发送。\n重现: {replay}",
        "{case}: rank {r} sent {what} of {n} row(s) to rank {dst} when its stage's {name} had run on only {ran}: "
        "send what the stage computed, after it computed it.\nReplay: {replay}",
    ),
    # tensor parallelism
    not_tensor=(
        "{case}: rank {r} 返回了 {kind}, 不是张量: 每个 rank 都要返回完整的 y。\n重现: {replay}",
        "{case}: rank {r} returned {kind}, not a tensor: return the full y on every rank.\nReplay: {replay}",
    ),
    bad_shape=(
        "{case}: rank {r} 返回的张量形状为 {shape}; y = gelu(x @ W1 + B1) @ W2 + b2 的形状是 {want} "
        "(每个 rank 上都是完整的输出, 而不是本 rank 的分片)。\n重现: {replay}",
        "{case}: rank {r} returned a tensor of shape {shape}; y = gelu(x @ W1 + B1) @ W2 + b2 has shape {want} "
        "(the full output on every rank, not this rank's shard).\nReplay: {replay}",
    ),
    bad_dtype=(
        "{case}: rank {r} 对 {dtype} 输入返回了 {got}。\n保持 x 的 dtype (不要用 float32 缓冲区: "
        "torch.zeros(..., dtype=x.dtype) 或 torch.empty_like)。\n重现: {replay}",
        "{case}: rank {r} returned {got} for {dtype} inputs.\nkeep x's dtype (no float32 buffers: "
        "torch.zeros(..., dtype=x.dtype) or torch.empty_like).\nReplay: {replay}",
    ),
    float32_only=(
        "{case}: rank {r} 的结果只在约 1e-7 的精度上与 float64 的 MLP 一致 (最大差异 {diff})。\n其中一部分是用 float32 "
        "计算的。每个中间结果和缓冲区都要保持 x 的 dtype (不要 .float(), 不要 float32 缓冲区)。\n重现: {replay}",
        "{case}: rank {r} is right only to about 1e-7 of the float64 MLP (largest difference {diff}).\npart of it "
        "was computed in float32. Keep x's dtype for every intermediate and buffer (no .float(), no float32 "
        "buffers).\nReplay: {replay}",
    ),
    tp_wrong=(
        "{case}: rank {r} 的输出与不分片的 MLP 不同: {why}。\n重现: {replay}",
        "{case}: rank {r}'s output differs from the unsharded MLP: {why}.\nReplay: {replay}",
    ),
    b2_everywhere=(
        "它差了 {k}·b2。\n每个 rank 都在 all_reduce 之前加了 b2, 所以求和的结果里每个 rank 各有一份 b2。"
        "请在规约之后加 b2 (或只在一个 rank 上加)",
        "it is off by {k}·b2.\nevery rank added b2 before the all_reduce, so the sum holds it "
        "once per rank. Add b2 after the reduction (or on one rank only)",
    ),
    averaged=(
        "它的矩阵乘部分是正确值的 1/{W}。\n部分积被取了平均, 而不是求和。行并行的部分和必须相加 (all_reduce SUM)",
        "its matmul part is 1/{W} of the right one.\nthe partial products were averaged, not summed. "
        "Row-parallel partial sums must be added (all_reduce SUM)",
    ),
    b2_missing=("缺少 b2", "b2 is missing"),
    tp_elements=(
        "{n} 个元素中有 {bad} 个有偏差 (按 torch.allclose 的默认容差); 第一个在 {i}: {eg}。\n按列切分 W1 "
        "(每个 rank 负责自己的隐藏单元, 并在其上做 gelu), 按行切分 W2, 再把部分输出相加",
        "{bad} of {n} elements are off (torch.allclose's default tolerances); the first at {i}: {eg}.\nSplit W1 by "
        "columns (each rank its own hidden units, gelu on them), W2 by rows, and sum the partial outputs",
    ),
    call_item=("{call}({numel} 个 {dtype} 元素{peer}{op})", "{call}({numel} {dtype} elements{peer}{op})"),
    call_peer=(", 对方 rank {peer}", " with rank {peer}"),
    call_op=(", 运算 {op}", ", op {op}"),
    calls_more=(" 以及另外 {n} 次", " and {n} more"),
    calls_none=("无", "none"),
    comm_calls=("{k} 次通信调用", "{k} comm calls"),
    comm_call=("{k} 次通信调用", "{k} comm call"),
    tp_avg=(
        "op 为 AVG 的 all_reduce 会对部分输出取平均: 它们必须求和",
        "an all_reduce with op AVG averages the partial outputs: they must be summed",
    ),
    tp_p2p=(
        "不需要点对点消息: 每个 rank 的部分输出由一次 all_reduce 求和",
        "point-to-point messages are not needed: each rank's partial output is summed by one all_reduce",
    ),
    tp_gather=(
        "不需要收集激活: W1 按列切分、W2 按行切分之后, 每个 rank 的部分输出已经是 y 的大小; "
        "一次 all_reduce 就能把它们相加",
        "gathering activations is not needed: with W1 split by columns and W2 by rows, each rank's "
        "partial output is already y's size; one all_reduce sums them",
    ),
    tp_many=("前向传播只需要一次 y 大小的 all_reduce", "one all_reduce of y's size is all the forward pass needs"),
    tp_buffer=(
        "缓冲区是 {got}: 请用 x 的 dtype ({dtype}) 做规约",
        "the buffer is {got}: reduce in x's dtype ({dtype})",
    ),
    tp_itself=(
        "对部分输出 y_r 本身 ({n} 个元素) 做 all_reduce",
        "all_reduce the partial output y_r itself ({n} elements)",
    ),
    tp_traffic=(
        "通信: {case}: rank {r} 发起了 {calls}: {listed}; Megatron MLP 每次前向恰好需要一次 y 大小的 comm.all_reduce "
        "({n} 个元素, {dtype}, SUM)。\n{note}。\n重现: {replay}",
        "communication: {case}: rank {r} made {calls}: {listed}; the Megatron MLP needs exactly one comm.all_reduce "
        "of y's size ({n} elements, {dtype}, SUM) per forward.\n{note}.\nReplay: {replay}",
    ),
    # ZeRO-1
    variant_sum=(
        "梯度被求和而不是取平均: 把 reduce-scatter 得到的分片除以 world_size",
        "the gradients were summed, not averaged: divide the reduce-scattered shard by world_size",
    ),
    variant_eps_in_sqrt=(
        "eps 在平方根之内: Adam 除以的是 sqrt(v̂) + eps",
        "eps is inside the square root: Adam divides by sqrt(v̂) + eps",
    ),
    variant_no_bias_correction=(
        "没有偏差修正: 要把 m 除以 1 − β1^t, v 除以 1 − β2^t (t = 1, 2, ...)",
        "no bias correction: divide m by 1 − β1^t and v by 1 − β2^t (t = 1, 2, ...)",
    ),
    variant_own=(
        "每个 rank 都用自己的梯度更新了它的分片。\n先对扁平梯度做 reduce-scatter, 让每个分片都用各 rank 的平均梯度更新",
        "each rank updated its shard with its own gradient.\nreduce-scatter the flat gradients first, so that "
        "every shard is updated with the mean over the ranks",
    ),
    rank_malformed=("{case}: rank {r} 的报告传回时格式有误", "{case}: rank {r}'s report came back malformed"),
    params_malformed=(
        "{case}: 第 {s} 步之后 rank {r} 的参数传回时格式有误",
        "{case}: rank {r}'s parameters came back malformed after step {s}",
    ),
    params_dtype=(
        "{case}: rank {r} 的参数变成了 {got} (应为 {dtype})。\n重现: {replay}",
        "{case}: rank {r}'s parameters became {got} ({dtype} expected).\nReplay: {replay}",
    ),
    elements=("{k} 个元素", "{k} elements"),
    element=("{k} 个元素", "{k} element"),
    never_changed=(
        "{count}从未改变 (扁平下标 {idx}, 共 {N} 个): N={N} 不是 W={W} 的倍数, 要填充到 W·⌈N/W⌉ = {padded}, "
        "让每个元素都属于某个分片, 并把全部 N 个元素复制回去",
        "{count} never changed (flat indices {idx} of {N}): with N={N} not a multiple of W={W}, pad to "
        "W·⌈N/W⌉ = {padded} so every element has a shard, and copy all N back",
    ),
    largest=(
        "最大差异为 {diff}, 位于扁平下标 {k} ({eg}; 允许 {tol}){more}",
        "the largest difference is {diff} at flat index {k} ({eg}; allowed {tol}){more}",
    ),
    f32_buffer=(
        "。\nfloat64 参数使用 float32 缓冲区就会损失这么多: 保持参数的 dtype",
        ".\na float32 buffer for float64 parameters loses that much: keep the parameters' dtype",
    ),
    defaults=(
        "。\n这个用例用签名的默认值构造 {fn}(params, comm), "
        "这些默认值必须与合约一致: lr=1e-3, betas=(0.9, 0.999), eps=1e-8",
        ".\nthis case builds {fn}(params, comm) with its signature's defaults, which must "
        "be the contract's: lr=1e-3, betas=(0.9, 0.999), eps=1e-8",
    ),
    zero_wrong=(
        "{case}: 第 {s} 步之后 rank {r} 的参数与 DDP (平均梯度) + torch.optim.Adam 不同: {why}。\n重现: {replay}",
        "{case}: rank {r}'s parameters after step {s} differ from DDP (averaged gradients) + "
        "torch.optim.Adam: {why}.\nReplay: {replay}",
    ),
    numel_not_int=(
        "{case}: rank {r} 的 state_numel() 返回了 {n}, 不是 int。\n重现: {replay}",
        "{case}: rank {r}'s state_numel() returned {n}, not an int.\nReplay: {replay}",
    ),
    numel_too_big=(
        "{case}: rank {r} 保存了 {n} 个元素的优化器状态 (state_numel()); ZeRO-1 只为自己的分片保存 exp_avg 和 "
        "exp_avg_sq: 至多 2·⌈N/W⌉ = 2·{c} = {bound}。\n重现: {replay}",
        "{case}: rank {r} keeps {n} elements of optimizer state (state_numel()); ZeRO-1 keeps "
        "exp_avg and exp_avg_sq for its own shard only: at most 2·⌈N/W⌉ = 2·{c} = {bound}.\nReplay: {replay}",
    ),
    numel_zero=(
        "{case}: rank {r} 的 state_numel() 是 {n}: 要把 exp_avg 和 exp_avg_sq 计算在内。\n重现: {replay}",
        "{case}: rank {r}'s state_numel() is {n}: count exp_avg and exp_avg_sq.\nReplay: {replay}",
    ),
    held_too_much=(
        "{case}: rank {r} 的 state_dict() 从一步到下一步携带了 {held} 个元素 "
        "(任何 dtype 的张量、数字、文本和字节都按其大小计, 每个 None、bool 和容器至少计一个); "
        "除了自己分片的 exp_avg 和 exp_avg_sq (2·{c}) 之外, 它还可以保存"
        "自己那一份参数分片和梯度分片 (各 {c} 个) 以及少量数字 (例如步数), "
        "但不能有任何大小为 N={N} 的东西。\n重现: {replay}",
        "{case}: rank {r}'s state_dict() carries {held} elements from one step to the next "
        "(tensors of any dtype, numbers, text and bytes count by their size, every None, bool and "
        "container at least one); besides exp_avg and "
        "exp_avg_sq of its shard (2·{c}) it may keep its own shard of the parameters and of "
        "the gradient ({c} each) and a few numbers such as the step count, nothing of size "
        "N={N}.\nReplay: {replay}",
    ),
    not_its_shard=(
        "{case}: 在第 {s} 步, rank {r} all-gather 的值不是它那一份更新后的参数分片 (该步之后的元素 {lo}..{hi})。\n"
        "ZeRO-1 只在自己的分片上运行 Adam, 然后 all-gather 更新后的参数分片, 而不是梯度 (收集梯度再在全部 N 个参数上"
        "运行 Adam, 会让每个 rank 都保存完整的优化器状态)。\n重现: {replay}",
        "{case}: at step {s} rank {r} all-gathered values that are not its shard of the "
        "updated parameters (elements {lo}..{hi} after the step).\nZeRO-1 runs Adam on its own "
        "shard only and all-gathers the updated parameter shard, not the gradients (gathering those "
        "to run Adam on all N parameters keeps the full optimizer state on every rank).\nReplay: {replay}",
    ),
    zero_all_reduce=(
        "all_reduce 会让每个 rank 都得到完整的平均梯度, 但一个 rank 只更新自己的分片: 改为对扁平梯度做 reduce-scatter "
        "(通信量减半), 再 all-gather 更新后的分片",
        "an all_reduce gives every rank the whole averaged gradient, but a rank updates only its shard: "
        "reduce-scatter the flat gradients instead (half the traffic), then all-gather the updated shards",
    ),
    zero_p2p=("请用这两个集合通信, 而不是点对点消息", "use the two collectives, not point-to-point messages"),
    zero_dtype=(
        "用了另一种 dtype 的缓冲区: 保持参数的 dtype ({dtype})",
        "a buffer of another dtype: keep the parameters' dtype ({dtype})",
    ),
    zero_shard=(
        "每个分片有 ⌈N/W⌉ = ⌈{N}/{W}⌉ = {c} 个元素 (把扁平缓冲区填充到 W·{c})",
        "each shard has ⌈N/W⌉ = ⌈{N}/{W}⌉ = {c} elements (pad the flat buffer to W·{c})",
    ),
    zero_per_step=(
        "每一步: 对填充后的扁平梯度做一次 reduce_scatter_tensor, 对更新后的分片做一次 all_gather_into_tensor",
        "per step: one reduce_scatter_tensor of the flat padded gradients, one all_gather_into_tensor "
        "of the updated shards",
    ),
    zero_traffic=(
        "通信: {case}: rank {r} 在 {steps} 步中发起了 {k} 次通信调用: {listed}; 应为每步恰好一次 reduce_scatter_tensor "
        "和一次 all_gather_into_tensor, 分片为 {c} 个元素 ({dtype})。\n{note}。\n重现: {replay}",
        "communication: {case}: rank {r} made {k} comm calls over {steps} steps: {listed}; expected per step exactly "
        "one reduce_scatter_tensor and one all_gather_into_tensor of {c}-element shards ({dtype}).\n{note}.\n"
        "Replay: {replay}",
    ),
)
NONE = Both("", "")  # an empty field: no hint, no note


def _joined(*parts: Both) -> Both:
    """Phrases one after the other, each language its own."""
    return Both("".join(p[0] for p in parts), "".join(p[1] for p in parts))


DTYPES = {"float32": torch.float32, "float64": torch.float64}
LOSSES = {"mse": F.mse_loss, "cross_entropy": F.cross_entropy}


def _kwargs(case) -> dict:  # what a replay line prints: never the judge's key
    return {k: (tuple(v) if isinstance(v, list) else v) for k, v in dataclasses.asdict(case).items() if k != "key"}


def _call(fn_name: str, check: str, case) -> Both:
    """The replay line in each language (the call is code; a hidden case's note is not)."""
    call = f"{check}({fn_name}, " + ", ".join(f"{k}={v!r}" for k, v in _kwargs(case).items()) + ")"
    return M.both("hidden_call", call=call) if case.key else Both(call, call)


def _said(line: Both) -> str:
    """A replay line as a string in the language in force (the call alone when there is no note)."""
    return line[1] if line[0] == line[1] else str(line)


def _gen(case, salt: int) -> torch.Generator:
    """The generator of one kind of the case's values. A case's ``key`` (0 unless the judge set it,
    from a secret of its own: graders/_hidden.py) mixes into the seed, so values drawn under a key
    cannot be found from the case's public fields: such a case's ranks get their inputs from the
    judge (:func:`rank_inputs`), never the case's seed and key."""
    if not case.key:
        return torch.Generator().manual_seed(case.seed * 1009 + salt)
    digest = hashlib.sha256(f"{case.key}:{case.seed}:{salt}".encode()).digest()
    return torch.Generator().manual_seed(int.from_bytes(digest[:8], "big") >> 1)


# ---------------------------------------------------------------------------------------------
# pipeline (GPipe)
# ---------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class PipeCase:
    stages: int  # P, one stage per rank
    n_micro: int  # m
    micro_rows: int = 2  # rows per micro-batch
    widths: tuple[int, ...] = ()  # P + 1 feature sizes (default: 3 everywhere)
    loss: str = "mse"  # mse | cross_entropy
    seed: int = 0
    grad_init: bool = False  # every .grad already holds something before the call
    policy: str = "stay"
    schedule_seed: int = 0
    key: int = 0  # the judge's hidden values (see _gen); never printed, never sent to a rank

    def __post_init__(self):
        if not self.widths:
            object.__setattr__(self, "widths", (3,) * (self.stages + 1))
        object.__setattr__(self, "widths", tuple(self.widths))

    @property
    def rows(self) -> int:
        return self.n_micro * self.micro_rows

    def bound(self) -> int:
        """GPipe's schedule length on the logical clock: 2(m + P − 1)."""
        return 2 * (self.n_micro + self.stages - 1)

    def label(self) -> Both:
        rows = M.both("row" if self.micro_rows == 1 else "rows", n=self.micro_rows)
        pre = M.both("pre_filled") if self.grad_init else NONE
        return M.both(
            "pipe_label", P=self.stages, m=self.n_micro, rows=rows, widths=list(self.widths), loss=self.loss, pre=pre
        )

    def replay(self, fn_name: str = "gpipe_step") -> str:
        return _said(self.replay_both(fn_name))

    def replay_both(self, fn_name: str = "gpipe_step") -> Both:
        return _call(fn_name, "check_pipeline_case", self)


class Stage(nn.Module):
    """One pipeline stage: a linear layer, then tanh (the last stage is linear only)."""

    def __init__(self, d_in: int, d_out: int, last: bool) -> None:
        super().__init__()
        self.linear = nn.Linear(d_in, d_out)
        self.in_features, self.out_features, self.last = d_in, d_out, last

    def forward(self, x):
        y = self.linear(x)
        return y if self.last else torch.tanh(y)


def make_stages(case: PipeCase, dtype=torch.float32, device: str = "cpu") -> list[Stage]:
    """The case's model, stage by stage, with seeded weights (and pre-filled .grad if asked)."""
    g = _gen(case, 1)
    out = []
    for r in range(case.stages):
        d_in, d_out = case.widths[r], case.widths[r + 1]
        st = Stage(d_in, d_out, r == case.stages - 1)
        with torch.no_grad():
            st.linear.weight.copy_(torch.randn(d_out, d_in, generator=g, dtype=torch.float64) / math.sqrt(d_in))
            st.linear.bias.copy_(torch.randn(d_out, generator=g, dtype=torch.float64) * 0.3)
        out.append(st.float().to(device=device, dtype=dtype))  # float32 values, whatever dtype is asked
    if case.grad_init:
        for st in out:
            for p in st.parameters():
                p.grad = (torch.randn(p.shape, generator=g, dtype=torch.float64) * 0.5).float().to(device, dtype)
    return out


def make_batch(case: PipeCase, device: str = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """(batch, target): float32 rows for rank 0, the target for rank P-1."""
    g = _gen(case, 2)
    x = torch.randn(case.rows, case.widths[0], generator=g, dtype=torch.float64).float()
    if case.loss == "cross_entropy":
        t = torch.randint(0, case.widths[-1], (case.rows,), generator=g)
    else:
        t = torch.randn(case.rows, case.widths[-1], generator=g, dtype=torch.float64).float()
    return x.to(device), t.to(device)


def pipeline_reference(case: PipeCase) -> dict:
    """The single-process full-batch step in float64: ``{"loss": float, "grads": [[flat]...],
    "own": [[flat]...]}`` (grads: what .grad must hold afterwards; own: this step's part)."""
    stages = make_stages(case, dtype=torch.float64)
    before = [[p.grad.clone() if p.grad is not None else None for p in st.parameters()] for st in stages]
    for st in stages:
        for p in st.parameters():
            p.grad = None
    x, t = make_batch(case)
    h = x.double()
    for st in stages:
        h = st(h)
    loss = LOSSES[case.loss](h, t if case.loss == "cross_entropy" else t.double())
    loss.backward()
    grads, own = [], []
    for r, st in enumerate(stages):
        gs, os_ = [], []
        for p, b in zip(st.parameters(), before[r]):
            g = p.grad.detach().reshape(-1).clone()
            os_.append(g.clone())
            gs.append(g + (b.reshape(-1) if b is not None else 0))
        grads.append(gs)
        own.append(os_)
    return {"loss": loss.item(), "grads": grads, "own": own, "before": before}


def _close(a: torch.Tensor, b: torch.Tensor, rtol: float = 1e-4, atol: float = 1e-5) -> bool:
    return a.shape == b.shape and bool(torch.allclose(a.double(), b.double(), rtol=rtol, atol=atol))


def pipeline_verdict(case: PipeCase, seen: dict, fn_name: str = "gpipe_step", ref: dict | None = None) -> str | None:
    """None when every stage's .grad and the returned loss match the full-batch step; otherwise why.

    ``seen``: ``{"returns": [per rank], "grads": [per rank: [flat tensor or None per parameter]]}``."""
    ref = ref or pipeline_reference(case)
    P, m = case.stages, case.n_micro
    head = case.label()
    replay = case.replay_both(fn_name)
    grads = seen.get("grads")
    if not isinstance(grads, list) or len(grads) != P:
        return M("malformed", case=head)
    for r in range(P):
        got_r, want_r, own_r = grads[r], ref["grads"][r], ref["own"][r]
        before_r = ref["before"][r]
        for i, (got, want, own) in enumerate(zip(got_r, want_r, own_r)):
            what = M.both("weight" if i == 0 else "bias", r=r)
            b = before_r[i].reshape(-1).double() if before_r[i] is not None else torch.zeros_like(own)
            if got is None or not isinstance(got, torch.Tensor):
                hint = M.both("no_grad_mid" if r < P - 1 else "no_grad_last")
                return M("no_grad", case=head, what=what, hint=hint, replay=replay)
            got = got.reshape(-1).double()
            if _close(got, want):
                continue
            if case.grad_init and _close(got, own):
                why = M.both("grad_replaced")
            elif _close(got, b) and float(own.abs().max()) > 1e-6:
                why = M.both("grad_unchanged_mid" if r < P - 1 else "grad_unchanged_last")
            elif m > 1 and _close(got, b + own * m):
                why = M.both("grad_times_m", m=m)
            elif m > 1 and _close(got, b + own / m):
                why = M.both("grad_over_m", m=m)
            else:
                bad = (~torch.isclose(got, want, rtol=1e-4, atol=1e-5)).nonzero().flatten().tolist() or [0]
                k = bad[0]
                eg = expected_got(f"{float(want[k]):.6g}", f"{float(got[k]):.6g}", bool(case.key))
                why = M.both("grad_elements", bad=len(bad), n=want.numel(), k=k, eg=eg)
            return M("grad_wrong", case=head, what=what, why=why, replay=replay)
    returns = seen.get("returns")
    if not isinstance(returns, list) or len(returns) != P:
        return M("malformed", case=head)
    for r in range(P - 1):
        if returns[r] is not None:
            return M("not_last_returned", case=head, r=r, v=_describe_return(returns[r]), replay=replay)
    last = returns[P - 1]
    if not (isinstance(last, dict) and last.get("kind") == "float"):
        return M("last_returned", case=head, r=P - 1, v=_describe_return(last), replay=replay)
    got, want = float(last["value"]), ref["loss"]
    if abs(got - want) <= 1e-4 * abs(want) + 1e-5:
        return None
    if m > 1 and abs(got - want * m) <= 1e-4 * abs(want * m) + 1e-5:
        why = M.both("loss_summed", m=m)
    else:
        why = expected_got(M.both("loss_mean", want=f"{want:.6g}"), f"{got:.6g}", bool(case.key))
    return M("loss_wrong", case=head, why=why, replay=replay)


def _describe_return(v) -> Both | str:
    if v is None:
        return "None"
    if isinstance(v, dict):
        if v.get("kind") == "float":
            return f"{v.get('value')!r}"
        if v.get("kind") == "tensor":
            return M.both("a_tensor", value=repr(v.get("value")))
        return M.both("a_type", type=v.get("type", "?"))
    return repr(v)


def schedule_chart(timeline: list, stages: int, length: float, max_ticks: int = 48) -> str:
    """The schedule as ranks × ticks: F3 = the forward of micro-batch 3, B3 its backward, . idle."""
    n = min(int(math.ceil(length - 1e-9)), max_ticks)
    rows = [["."] * n for _ in range(stages)]
    for ev in timeline:
        r, start, end, kind, first = ev[0], float(ev[1]), float(ev[2]), str(ev[3]), int(ev[4])
        if not 0 <= r < stages:
            continue
        k = max(1, round(end - start))
        for j in range(k):
            t = int(math.floor(start + 1e-9)) + j
            if 0 <= t < n:
                rows[r][t] = f"{kind}{first + j}"
    w = max([len(c) for row in rows for c in row] + [len(str(max(n - 1, 0)))]) + 1
    head = "tick    " + "".join(str(t).rjust(w) for t in range(n))
    lines = [head] + [f"rank {r}  " + "".join(c.rjust(w) for c in rows[r]) for r in range(stages)]
    if length > max_ticks:
        lines.append(M("chart_cut", n=max_ticks, length=f"{length:g}"))
    return "\n".join(lines)


def schedule_problem(case: PipeCase, seen: dict, fn_name: str = "gpipe_step") -> str | None:
    """None when the schedule is no longer than GPipe's 2(m + P − 1) ticks, every stage did the whole
    batch's work, and (on a relayed world, whose ``flow`` the judge observed) every charge followed
    the data it was for; otherwise why, with the chart."""
    length = seen.get("length")
    if not isinstance(length, (int, float)):
        return M("malformed", case=case.label())
    bound = case.bound()
    P, m = case.stages, case.n_micro
    timeline = seen.get("timeline") or []
    for r in range(P):  # every rank's stage worked through the whole batch, forward and backward
        for kind, name in (("F", "forward"), ("B", "backward")):
            done = sum(float(ev[2]) - float(ev[1]) for ev in timeline if ev[0] == r and str(ev[3]) == kind)
            if done < m - 1e-9:
                return M(
                    "stage_work",
                    case=case.label(),
                    r=r,
                    name=M.both(name),
                    done=f"{done:g}",
                    m=m,
                    replay=case.replay_both(fn_name),
                )
    if seen.get("flow") is not None:  # a relayed world's: the charges must follow the data
        problem = dataflow_problem(case, seen["flow"], fn_name)
        if problem:
            return problem
    if length <= bound + 1e-9:
        return None
    chart = schedule_chart(seen.get("timeline") or [], P, float(length))
    hint = M.both("serial") if abs(length - 2 * P * m) < 1e-9 else NONE
    # the sentence in each language, then the chart once, then the replay line
    too_long = M("too_long", case=case.label(), took=f"{float(length):g}", m=m, P=P, bound=bound, hint=hint)
    return too_long + "\n" + chart + "\n" + M("replay", replay=case.replay_both(fn_name))


def _rows_found(t, expected: torch.Tensor, factors=(1,)) -> set:
    """Which rows of ``expected`` (times one of ``factors``) appear in ``t`` as contiguous runs of
    its flattened values (so a message may hold a header, several rows or a whole batch): each run
    of ``t`` counts for at most one row, the closest, within float32's error of the row's values."""
    if not isinstance(t, torch.Tensor) or not t.is_floating_point():
        return set()
    w = expected.shape[1]
    flat = t.detach().to("cpu", torch.float64).reshape(-1)
    if flat.numel() < w or flat.numel() > 64 * expected.numel():  # too short, or not a pipeline message
        return set()
    windows = flat.unfold(0, w, 1)
    found = set()
    for f in factors:
        rows = expected * f
        diff = (windows[:, None, :] - rows[None]).abs()
        scale = rows.abs().amax().clamp_min(1e-30)
        close = (diff <= 1e-5 * scale + 1e-4 * rows[None].abs()).all(-1)  # (windows, rows)
        best = diff.amax(-1).argmin(1)  # each window's closest row
        found |= {int(best[i]) for i in range(windows.shape[0]) if bool(close[i, best[i]])}
    return found


def _flow_reference(case: PipeCase) -> tuple[list, list]:
    """(activations, gradients) of the whole batch in float64: activations[r] is what rank r
    receives from rank r - 1 (the batch for r = 0), gradients[r] the loss's gradient with respect
    to it (what rank r sends back to rank r - 1)."""
    stages = make_stages(case, dtype=torch.float64)
    x, t = make_batch(case)
    h = x.double().requires_grad_()
    acts = [h]
    for st in stages:
        h = st(h)
        h.retain_grad()
        acts.append(h)
    LOSSES[case.loss](h, t if case.loss == "cross_entropy" else t.double()).backward()
    return [a.detach() for a in acts], [a.grad.detach() for a in acts]


def dataflow_problem(case: PipeCase, flow: list, fn_name: str = "gpipe_step") -> str | None:
    """None when every rank's clock charges follow its data: a stage's forward runs on no more rows
    than the activations it has received, its backward on no more than the gradients it has
    received, and it sends on no more activations (gradients) than its forward (backward) has run
    on. ``flow``: a relayed world's data flow (procgroup.SimWorld.flow), in each rank's call order.
    Rows are found by value: the gradients are those of the mean loss (each micro-batch's loss
    divided by m; the micro-batches are of equal size), or of that loss times m, the micro-batch
    size or both (a right answer may divide by m at the end, or sum over rows, and keeps the
    schedule's points).
    A charge made on other data (a stage called on zeros while the real work is done by hand)
    would otherwise let a schedule look pipelined that is not."""
    P, mr = case.stages, case.micro_rows
    if P == 1:
        return None
    acts, grads = _flow_reference(case)
    total = acts[0].shape[0]
    factors = tuple(sorted({1, case.n_micro, mr, case.n_micro * mr}))  # how right answers scale the loss
    charged = {(r, k): Fraction(0) for r in range(P) for k in ("F", "B")}
    got = {(r, k): set() for r in range(P) for k in ("F", "B")}
    sent = {(r, k): set() for r in range(P) for k in ("F", "B")}
    replay = case.replay_both(fn_name)
    for event in flow:
        r, what = event[0], event[1]
        if what in ("F", "B"):
            charged[r, what] += event[2] * mr
            had = len(got[r, what])
            needs = (r > 0) if what == "F" else (r < P - 1)
            if needs and min(charged[r, what], total) > had:
                side = M.both("acts_from", src=r - 1) if what == "F" else M.both("grads_from", src=r + 1)
                pass_ = M.both("forward" if what == "F" else "backward")
                n = f"{float(charged[r, what]):g}"
                return M("ran_before_data", case=case.label(), r=r, name=pass_, n=n, had=had, side=side, replay=replay)
        elif what == "got":
            src, t = event[2], event[3]
            if src == r - 1:
                got[r, "F"] |= _rows_found(t, acts[r])
            elif src == r + 1:
                got[r, "B"] |= _rows_found(t, grads[r + 1], factors)
        elif what == "put":
            dst, t = event[2], event[3]
            if dst == r + 1:
                kind, rows = "F", _rows_found(t, acts[r + 1])
            elif dst == r - 1:
                kind, rows = "B", _rows_found(t, grads[r], factors)
            else:
                continue
            sent[r, kind] |= rows
            if len(sent[r, kind]) > charged[r, kind]:
                what_ = M.both("activations" if kind == "F" else "gradients")
                pass_ = M.both("forward" if kind == "F" else "backward")
                return M(
                    "sent_before_run",
                    case=case.label(),
                    r=r,
                    what=what_,
                    n=len(sent[r, kind]),
                    dst=dst,
                    name=pass_,
                    ran=f"{float(charged[r, kind]):g}",
                    replay=replay,
                )
    return None


# ---------------------------------------------------------------------------------------------
# tensor parallelism (Megatron MLP)
# ---------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class TPCase:
    world_size: int
    lead: tuple[int, ...] = (3,)  # x's leading dims: x is (*lead, d_in)
    d_in: int = 4
    hidden: int = 8  # a multiple of world_size
    d_out: int = 3
    dtype: str = "float32"
    seed: int = 0
    policy: str = "stay"
    schedule_seed: int = 0
    key: int = 0  # the judge's hidden values (see _gen); never printed, never sent to a rank

    def __post_init__(self):
        object.__setattr__(self, "lead", tuple(self.lead))

    def label(self) -> Both:
        shape = (*self.lead, self.d_in)
        return M.both(
            "tp_label", W=self.world_size, shape=shape, hidden=self.hidden, d_out=self.d_out, dtype=self.dtype
        )

    def replay(self, fn_name: str = "tp_mlp") -> str:
        return _said(self.replay_both(fn_name))

    def replay_both(self, fn_name: str = "tp_mlp") -> Both:
        return _call(fn_name, "check_tp_case", self)

    @property
    def y_shape(self) -> tuple[int, ...]:
        return (*self.lead, self.d_out)


def make_mlp(case: TPCase, device: str = "cpu") -> dict:
    """x and the full W1, B1, W2, b2 of the case (b2 kept away from zero: outputs are O(1))."""
    g = _gen(case, 3)
    dt = DTYPES[case.dtype]
    r = lambda *s: torch.randn(*s, generator=g, dtype=torch.float64)  # noqa: E731
    sign = torch.where(r(case.d_out) >= 0, 1.0, -1.0).double()
    full = {
        "x": r(*case.lead, case.d_in),
        "W1": r(case.d_in, case.hidden) / math.sqrt(case.d_in),
        "B1": r(case.hidden) * 0.5,
        "W2": r(case.hidden, case.d_out) * 0.5 / math.sqrt(case.hidden),
        "b2": sign * (1.0 + torch.rand(case.d_out, generator=g, dtype=torch.float64)),
    }
    return {k: v.to(device=device, dtype=dt) for k, v in full.items()}


def tp_shard(full: dict, case: TPCase, rank: int) -> tuple:
    """Rank ``rank``'s arguments: (x, w1, b1, w2, b2), each a fresh contiguous tensor."""
    c = case.hidden // case.world_size
    cols = slice(rank * c, (rank + 1) * c)
    return (
        full["x"].clone(),
        full["W1"][:, cols].contiguous(),
        full["B1"][cols].contiguous(),
        full["W2"][cols, :].contiguous(),
        full["b2"].clone(),
    )


def tp_reference(case: TPCase) -> torch.Tensor:
    """The unsharded MLP gelu(x @ W1 + B1) @ W2 + b2, computed in float64, in the case's dtype."""
    full = {k: v.double() for k, v in make_mlp(case).items()}
    y = F.gelu(full["x"] @ full["W1"] + full["B1"]) @ full["W2"] + full["b2"]
    return y.to(DTYPES[case.dtype])


def _tp_tolerance(dtype) -> dict:
    """float64 cases are held to float64: a sum in another order differs by ~1e-15, a float32
    intermediate by ~1e-7, which allclose's defaults would let pass."""
    return {"rtol": 1e-9, "atol": 1e-12} if dtype == torch.float64 else {}


def tp_verdict(case: TPCase, outputs: list, fn_name: str = "tp_mlp") -> str | None:
    """None when every rank returned y (x's dtype, allclose to the unsharded MLP); otherwise why."""
    want = tp_reference(case)
    full = {k: v.double() for k, v in make_mlp(case).items()}
    W = case.world_size
    replay = case.replay_both(fn_name)
    for r, out in enumerate(outputs):
        head = case.label()
        if not isinstance(out, torch.Tensor):
            kind = out if isinstance(out, str) else type(out).__name__
            return M("not_tensor", case=head, r=r, kind=kind, replay=replay)
        if tuple(out.shape) != case.y_shape:
            return M("bad_shape", case=head, r=r, shape=tuple(out.shape), want=case.y_shape, replay=replay)
        if out.dtype != want.dtype:
            got = str(out.dtype).replace("torch.", "")
            return M("bad_dtype", case=head, r=r, got=got, dtype=case.dtype, replay=replay)
        if torch.allclose(out, want, **_tp_tolerance(want.dtype)):
            continue
        if torch.allclose(out, want):  # right to float32's precision only
            diff = f"{(out - want).abs().max().item():.1e}"
            return M("float32_only", case=head, r=r, diff=diff, replay=replay)
        got = out.double()
        b2 = full["b2"]
        partial = want.double() - b2
        if W > 1 and torch.allclose(got, partial + W * b2, rtol=1e-4, atol=1e-6):
            why = M.both("b2_everywhere", k=W - 1)
        elif W > 1 and torch.allclose(got, partial / W + b2, rtol=1e-4, atol=1e-6):
            why = M.both("averaged", W=W)
        elif torch.allclose(got, partial, rtol=1e-4, atol=1e-6):
            why = M.both("b2_missing")
        else:
            bad = (~torch.isclose(out, want)).nonzero().tolist()
            i = tuple(bad[0]) if bad else ()
            eg = expected_got(f"{float(want[i]):.8g}", f"{float(out[i]):.8g}", bool(case.key))
            why = M.both("tp_elements", bad=len(bad), n=want.numel(), i=i, eg=eg)
        return M("tp_wrong", case=head, r=r, why=why, replay=replay)
    return None


def _calls_text(calls: list) -> Both:
    parts = []
    for c in calls[:6]:
        op = M.both("call_op", op=c.get("op")) if c.get("op") not in (None, "SUM") else NONE
        peer = M.both("call_peer", peer=c.get("peer")) if c.get("peer") is not None else NONE
        parts.append(
            M.both("call_item", call=c.get("call"), numel=c.get("numel"), dtype=c.get("dtype"), peer=peer, op=op)
        )
    if not parts:
        return M.both("calls_none")
    more = M.both("calls_more", n=len(calls) - 6) if len(calls) > 6 else NONE
    return _joined(Both(", ".join(p[0] for p in parts), ", ".join(p[1] for p in parts)), more)


def tp_traffic_problem(case: TPCase, logs: list, fn_name: str = "tp_mlp") -> str | None:
    """None when each rank made exactly one all_reduce (SUM) of y's size in x's dtype (or none at W=1)."""
    n = math.prod(case.y_shape)
    W = case.world_size
    for r, calls in enumerate(logs):
        calls = [c for c in calls if isinstance(c, dict)]
        good = (
            len(calls) == 1
            and calls[0].get("call") == "all_reduce"
            and calls[0].get("numel") == n
            and calls[0].get("op") == "SUM"
            and calls[0].get("dtype") == case.dtype
        )
        if good or (W == 1 and not calls):
            continue
        if any(c.get("call") == "all_reduce" and c.get("op") == "AVG" for c in calls):
            note = M.both("tp_avg")
        elif any(c.get("call") in ("send", "recv", "isend", "irecv") for c in calls):
            note = M.both("tp_p2p")
        elif any(c.get("call") == "all_gather_into_tensor" for c in calls):
            note = M.both("tp_gather")
        elif len(calls) > 1:
            note = M.both("tp_many")
        elif calls and calls[0].get("dtype") != case.dtype:
            note = M.both("tp_buffer", got=calls[0].get("dtype"), dtype=case.dtype)
        else:
            note = M.both("tp_itself", n=n)
        return M(
            "tp_traffic",
            case=case.label(),
            r=r,
            calls=M.both("comm_call" if len(calls) == 1 else "comm_calls", k=len(calls)),
            listed=_calls_text(calls),
            n=n,
            dtype=case.dtype,
            note=note,
            replay=case.replay_both(fn_name),
        )
    return None


# ---------------------------------------------------------------------------------------------
# ZeRO-1 (Adam with sharded optimizer state)
# ---------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class ZeroCase:
    world_size: int
    shapes: tuple = ((3, 4), (4,), (2,))  # the parameters' shapes
    dtype: str = "float64"
    steps: int = 3
    lr: float = 1e-2
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8
    grad_scale: float = 1.0  # 1e-6: tiny gradients, where the mean and eps matter
    seed: int = 0
    policy: str = "stay"
    schedule_seed: int = 0
    key: int = 0  # the judge's hidden values (see _gen); never printed, never sent to a rank

    def __post_init__(self):
        object.__setattr__(self, "shapes", tuple(tuple(s) for s in self.shapes))
        object.__setattr__(self, "betas", tuple(self.betas))

    @property
    def numel(self) -> int:
        return sum(math.prod(s) for s in self.shapes)

    @property
    def shard(self) -> int:
        return -(-self.numel // self.world_size)

    def label(self) -> Both:
        tiny = M.both("tiny", g=f"{self.grad_scale:g}") if self.grad_scale != 1.0 else NONE
        return M.both(
            "zero_label",
            W=self.world_size,
            n=len(self.shapes),
            shapes=list(self.shapes),
            N=self.numel,
            dtype=self.dtype,
            steps=self.steps,
            lr=f"{self.lr:g}",
            betas=self.betas,
            eps=f"{self.eps:g}",
            tiny=tiny,
        )

    def replay(self, fn_name: str = "ZeroAdam") -> str:
        return _said(self.replay_both(fn_name))

    def replay_both(self, fn_name: str = "ZeroAdam") -> Both:
        return _call(fn_name, "check_zero_case", self)

    def tolerance(self) -> float:
        return 1e-10 if self.dtype == "float64" else 1e-6


def make_params(case: ZeroCase, device: str = "cpu") -> list[torch.Tensor]:
    g = _gen(case, 4)
    return [
        torch.randn(s, generator=g, dtype=torch.float64).to(device=device, dtype=DTYPES[case.dtype])
        for s in case.shapes
    ]


def make_grads(case: ZeroCase, step: int, rank: int, device: str = "cpu") -> list[torch.Tensor]:
    """Rank ``rank``'s own gradients at ``step`` (different on every rank)."""
    g = _gen(case, 1000 + 97 * step + rank)
    return [
        (torch.randn(s, generator=g, dtype=torch.float64) * case.grad_scale).to(device=device, dtype=DTYPES[case.dtype])
        for s in case.shapes
    ]


def adam_reference(case: ZeroCase, variant: str = "") -> list[torch.Tensor]:
    """The parameters after each step (flat, concatenated) of DDP + Adam: gradients averaged over the
    ranks (summed in rank order, divided by W), then ``torch.optim.Adam`` with the case's
    hyper-parameters. ``variant`` computes a known mistake instead, by hand: "sum" (no division),
    "eps_in_sqrt", "no_bias_correction", "own" (shard r updated with rank r's own gradient)."""
    W, N, c = case.world_size, case.numel, case.shard
    sizes = [math.prod(s) for s in case.shapes]
    params = [torch.nn.Parameter(t.clone()) for t in make_params(case)]
    if not variant:
        opt = torch.optim.Adam(params, lr=case.lr, betas=case.betas, eps=case.eps, foreach=False)
    flat_p = torch.cat([p.detach().reshape(-1) for p in params])
    m, v = torch.zeros_like(flat_p), torch.zeros_like(flat_p)
    b1, b2 = case.betas
    out = []
    for step in range(case.steps):
        grads = [torch.cat([g.reshape(-1) for g in make_grads(case, step, r)]) for r in range(W)]
        total = grads[0].clone()
        for r in range(1, W):
            total += grads[r]
        if not variant:
            for p, g in zip(params, (total / W).split(sizes)):
                p.grad = g.view_as(p).clone()
            opt.step()
            out.append(torch.cat([p.detach().reshape(-1).clone() for p in params]))
            continue
        if variant == "sum":
            g = total
        elif variant == "own":
            owner = torch.clamp(torch.arange(N) // max(c, 1), max=W - 1)
            g = torch.stack(grads)[owner, torch.arange(N)]
        else:
            g = total / W
        m.mul_(b1).add_(g, alpha=1 - b1)
        v.mul_(b2).addcmul_(g, g, value=1 - b2)
        t = step + 1
        c1, c2 = (1.0, 1.0) if variant == "no_bias_correction" else (1 - b1**t, 1 - b2**t)
        denom = (v / c2 + case.eps).sqrt() if variant == "eps_in_sqrt" else (v / c2).sqrt() + case.eps
        flat_p = flat_p - case.lr * (m / c1) / denom
        out.append(flat_p.clone())
    return out


ZERO_DEFAULTS = {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8}  # ZeroAdam's signature (CONTRACT 8.5)

# each known mistake (adam_reference's variants) and what it says
VARIANTS = {name: M.both(f"variant_{name}") for name in ("sum", "eps_in_sqrt", "no_bias_correction", "own")}


def zero_verdict(case: ZeroCase, per_rank: list, fn_name: str = "ZeroAdam", ref: list | None = None) -> str | None:
    """None when every rank's parameters follow DDP + Adam at every step; otherwise why.

    ``per_rank``: for each rank, the list of its flat parameters after each step."""
    ref = ref if ref is not None else adam_reference(case)
    tol = case.tolerance()
    replay = case.replay_both(fn_name)
    for r, steps in enumerate(per_rank):
        if not isinstance(steps, list) or len(steps) != case.steps:
            return M("rank_malformed", case=case.label(), r=r)
        for s, (got, want) in enumerate(zip(steps, ref)):
            if not isinstance(got, torch.Tensor) or got.numel() != want.numel():
                return M("params_malformed", case=case.label(), r=r, s=s + 1)
            got = got.reshape(-1)
            if got.dtype != want.dtype:
                return M("params_dtype", case=case.label(), r=r, got=got.dtype, dtype=case.dtype, replay=replay)
            diff = (got.double() - want.double()).abs()
            if float(diff.max()) <= tol:
                continue
            why = None
            for name, text in VARIANTS.items():
                other = adam_reference(case, name)[s]
                if float((other.double() - want.double()).abs().max()) <= tol:
                    continue  # the same as the right answer on this case (a sum at W = 1)
                if float((got.double() - other.double()).abs().max()) <= max(tol, 1e-12) * 10:
                    why = text
                    break
            if not why:
                init = torch.cat([t.reshape(-1) for t in make_params(case)]).double()
                still = (got.double() == init) & (want.double() != init)
                if bool(still.any()):
                    idx = still.nonzero().flatten().tolist()
                    why = M.both(
                        "never_changed",
                        count=M.both("element" if len(idx) == 1 else "elements", k=len(idx)),
                        idx=f"{idx[:6]}{'...' if len(idx) > 6 else ''}",
                        N=case.numel,
                        W=case.world_size,
                        padded=case.world_size * case.shard,
                    )
                else:
                    k = int(diff.argmax())
                    eg = expected_got(f"{float(want[k]):.12g}", f"{float(got[k]):.12g}", bool(case.key))
                    more = []
                    if case.dtype == "float64" and float(diff.max()) < 1e-5:
                        more.append(M.both("f32_buffer"))
                    hyper = {"lr": case.lr, "betas": tuple(case.betas), "eps": case.eps}
                    if hyper == ZERO_DEFAULTS:
                        more.append(M.both("defaults", fn=fn_name))
                    diff_max = f"{float(diff.max()):.3g}"
                    why = M.both("largest", diff=diff_max, k=k, eg=eg, tol=f"{tol:g}", more=_joined(NONE, *more))
            return M("zero_wrong", case=case.label(), r=r, s=s + 1, why=why, replay=replay)
    return None


STATE_NUMBERS = 256  # elements a state may hold besides its tensors (torch.optim.Adam's own state_dict() takes 74)


def state_elements(state, elsize: int) -> int:
    """How much a ``state_dict()`` holds, in elements of the parameters' size: a tensor or array counts
    its bytes, a number its 8 bytes (a big int all of its bytes), text and bytes their bytes, and
    every node at least one element: None, a bool and each container too, with its keys and items.
    What crosses between steps is plain data, so this bounds what it can carry whatever its shape
    (full moments as a list of bools, or as a pattern of None and [], cost more than they hold)."""
    total, todo = 0, [state]
    while todo:  # a stack, not recursion: no depth a state can nest to ends the count
        x = todo.pop()
        if isinstance(x, torch.Tensor):
            nbytes = x.numel() * x.element_size()
        elif hasattr(x, "nbytes") and hasattr(x, "dtype"):  # a numpy array
            nbytes = int(x.nbytes)
        elif type(x) is int:
            nbytes = max(8, (x.bit_length() + 8) // 8)
        elif type(x) in (float, complex):
            nbytes = 8 if type(x) is float else 16
        elif type(x) in (str, bytes):
            nbytes = len(x.encode() if type(x) is str else x)
        elif type(x) is dict:
            nbytes = 0
            todo.extend(x.keys())
            todo.extend(x.values())
        elif type(x) in (list, tuple, set, frozenset):
            nbytes = 0
            todo.extend(x)
        else:  # None, a bool
            nbytes = 0
        total += max(1, -(-nbytes // elsize))
    return total


def zero_state_problem(case: ZeroCase, seen: dict, fn_name: str = "ZeroAdam") -> str | None:
    """None when every rank's ``state_numel()`` is at most 2·⌈N/W⌉ and what its ``state_dict()`` carried
    between steps (``seen["held"]``, :func:`state_elements`) is at most 4·⌈N/W⌉ elements and
    ``STATE_NUMBERS`` numbers; otherwise why."""
    bound = 2 * case.shard
    replay = case.replay_both(fn_name)
    for r, (n, held) in enumerate(zip(seen.get("state_numel", []), seen.get("held", []))):
        if not (isinstance(n, int) and not isinstance(n, bool)):
            return M("numel_not_int", case=case.label(), r=r, n=repr(n), replay=replay)
        if n > bound:
            return M("numel_too_big", case=case.label(), r=r, n=n, c=case.shard, bound=bound, replay=replay)
        if n <= 0 and case.numel > 0:
            return M("numel_zero", case=case.label(), r=r, n=n, replay=replay)
        # exp_avg, exp_avg_sq, a master copy of the shard and a gradient buffer of the shard: 4·c
        if isinstance(held, int) and held > 4 * case.shard + STATE_NUMBERS and case.world_size > 1:
            return M("held_too_much", case=case.label(), r=r, held=held, c=case.shard, N=case.numel, replay=replay)
    return None


def zero_dataflow_problem(case: ZeroCase, flow: list, fn_name: str = "ZeroAdam") -> str | None:
    """None when each rank's all_gather_into_tensor of step s sends its own shard of the updated
    parameters (DDP + Adam after step s + 1, the padding aside): what ZeRO-1 gathers. ``flow``: a
    relayed world's record of each rank's collective inputs (procgroup.SimWorld.flow), kept by the
    judge as the broker. A rank that gathers anything else (the averaged gradient, to run Adam on all
    N parameters with the full state kept where no walk of its objects looks: a file, a module
    object, a ContextVar, the comm...) fails here whatever it holds: no walk of objects can look
    everywhere, the data flow can."""
    W, c, n = case.world_size, case.shard, case.numel
    if W == 1:
        return None
    ref = adam_reference(case)
    tol = case.tolerance()
    replay = case.replay_both(fn_name)
    for r in range(W):
        gathered = [e[2] for e in flow if e[0] == r and e[1] == "all_gather_into_tensor"]
        lo, hi = r * c, min((r + 1) * c, n)
        for s, t in enumerate(gathered[: case.steps]):
            want = ref[s].reshape(-1)[lo:hi].double()
            got = t.reshape(-1)[: hi - lo].double() if t.numel() >= hi - lo else None
            if got is None or (hi > lo and float((got - want).abs().max()) > tol):
                return M("not_its_shard", case=case.label(), s=s + 1, r=r, lo=lo, hi=hi - 1, replay=replay)
    return None


def zero_traffic_problem(case: ZeroCase, logs: list, fn_name: str = "ZeroAdam") -> str | None:
    """None when each step is one reduce_scatter_tensor and one all_gather_into_tensor of ⌈N/W⌉-element
    shards in the parameters' dtype (or no communication at all at W=1)."""
    c, W = case.shard, case.world_size
    want = ["reduce_scatter_tensor", "all_gather_into_tensor"] * case.steps
    for r, calls in enumerate(logs):
        calls = [x for x in calls if isinstance(x, dict)]
        names = [x.get("call") for x in calls]
        if W == 1 and not calls:
            continue
        ok = names == want and all(x.get("numel") == c and x.get("dtype") == case.dtype for x in calls)
        if ok:
            continue
        if "all_reduce" in names:
            note = M.both("zero_all_reduce")
        elif any(n in ("send", "recv", "isend", "irecv") for n in names):
            note = M.both("zero_p2p")
        elif calls and any(x.get("dtype") != case.dtype for x in calls):
            note = M.both("zero_dtype", dtype=case.dtype)
        elif calls and any(x.get("numel") != c for x in calls):
            note = M.both("zero_shard", N=case.numel, W=W, c=c)
        else:
            note = M.both("zero_per_step")
        return M(
            "zero_traffic",
            case=case.label(),
            r=r,
            k=len(calls),
            steps=case.steps,
            listed=_calls_text(calls),
            c=c,
            dtype=case.dtype,
            note=note,
            replay=case.replay_both(fn_name),
        )
    return None


# ---------------------------------------------------------------------------------------------
# one rank's inputs, as the judge hands them to a rank of a relayed world
# ---------------------------------------------------------------------------------------------
def rank_inputs(case, rank: int) -> dict:
    """What rank ``rank`` of ``case`` is given and nothing more (plain tensors, for the wire): its
    stage's weights, biases and pre-filled grads (and the batch on rank 0, the target on the last
    rank); its shard of the MLP; the shared initial parameters and its own gradients of every step.
    The judge sends these to a relayed rank with the case's ``key`` and ``seed`` cleared, so that a
    rank cannot rebuild another rank's inputs and skip the communication the exercise is about."""
    if isinstance(case, PipeCase):
        stage = make_stages(case)[rank]
        batch, target = make_batch(case)
        return {
            "weight": stage.linear.weight.detach().clone(),
            "bias": stage.linear.bias.detach().clone(),
            "grads": [p.grad.clone() for p in stage.parameters()] if case.grad_init else None,
            "batch": batch if rank == 0 else None,
            "target": target if rank == case.stages - 1 else None,
        }
    if isinstance(case, TPCase):
        return {"args": list(tp_shard(make_mlp(case), case, rank))}
    return {"params": make_params(case), "grads": [make_grads(case, s, rank) for s in range(case.steps)]}
