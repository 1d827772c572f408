"""Pictures a student reads at a glance: drawn from the plain observations the checks already make.

Each function takes plain data (lists, dicts, numbers: what crosses from the grading subject to the
judge) and returns PNG bytes, drawn with matplotlib's Agg backend (no display needed). The hidden
graders attach them to a failure's feedback; the self-checks show them under a ✘ line
(:func:`show`). Nothing here runs the student's code.
"""

from __future__ import annotations

import io
import textwrap

MAX_ARRAYS = 4  # panels in a picture of CUDA accesses
BLOCK_COLOURS = ("#1f77b4", "#2ca02c", "#9467bd", "#8c564b")
FAULT = "#d62728"


def _figure(width: float, height: float):
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=80, layout="constrained")


def png(fig) -> bytes:
    out = io.BytesIO()
    fig.savefig(out, format="png")
    return out.getvalue()


def _title(text: str, width: int = 110, lines: int = 3) -> str:
    first = (text or "").strip().splitlines()[:1]
    return "\n".join(textwrap.wrap(first[0], width)[:lines]) if first else ""


def cuda_accesses(accesses: dict, message: str = "") -> bytes:
    """Which thread read (dot), wrote (square) or atomically updated (triangle) which element, one
    panel per array (global arrays by global thread id, shared arrays by thread of the block), up
    to a fault of the checking simulator (ch13lib.cuda_sim): the faulting thread in red, its last
    access (or the out-of-bounds index) marked with a cross."""
    arrays = accesses.get("arrays") or []
    events = accesses.get("events") or []
    per_block = 1
    for d in accesses.get("blockdim") or [1]:
        per_block *= int(d)
    fault_thread = accesses.get("fault_thread")
    bad = accesses.get("bad_index")
    used = sorted({e[0] for e in events})
    by_name = {arrays[i][0]: i for i in used}
    last_fault = next((e for e in reversed(events) if e[1] == fault_thread), None)
    first = by_name.get(bad[0]) if bad else (last_fault[0] if last_fault else None)
    order = ([first] if first is not None else []) + [i for i in used if i != first]
    order = order[:MAX_ARRAYS] or [None]
    fig = _figure(9, 1.2 + 2.1 * len(order))
    axes = fig.subplots(len(order), 1, squeeze=False)[:, 0]
    fig.suptitle(_title(message) or "accesses of one launch", fontsize=9, color=FAULT if message else "black")
    for ax, index in zip(axes, order):
        if index is None:
            ax.text(0.5, 0.5, "no array access was recorded", ha="center", va="center")
            ax.set_axis_off()
            continue
        name, space, block, size = arrays[index]
        shared = space == "shared"
        mine = [e for e in events if e[0] == index]
        for kind, marker, size_pt in (("r", ".", 30), ("w", "s", 22), ("a", "^", 26)):
            for b in sorted({e[1] // per_block for e in mine}):
                pts = [e for e in mine if e[3] == kind and e[1] // per_block == b and e[1] != fault_thread]
                if pts:
                    ax.scatter(
                        [e[2] for e in pts],
                        [(e[1] % per_block) if shared else e[1] for e in pts],
                        s=size_pt,
                        marker=marker,
                        color=BLOCK_COLOURS[b % len(BLOCK_COLOURS)],
                        label=f"{ {'r': 'read', 'w': 'write', 'a': 'atomic'}[kind] }, block {b}",
                        alpha=0.8,
                    )
            pts = [e for e in mine if e[3] == kind and e[1] == fault_thread]
            if pts:
                ax.scatter(
                    [e[2] for e in pts],
                    [(e[1] % per_block) if shared else e[1] for e in pts],
                    s=size_pt * 1.6,
                    marker=marker,
                    color=FAULT,
                    label=f"{ {'r': 'read', 'w': 'write', 'a': 'atomic'}[kind] }, the faulting thread",
                )
        touched = max([e[2] for e in mine] + ([bad[2][-1]] if bad and bad[0] == name and len(bad[2]) == 1 else []))
        if size <= 1.5 * (touched + 1) + 4:
            ax.axvline(size - 0.5, color="gray", linestyle="--", linewidth=0.8)
        else:  # a big array touched at its start (a shared array of 1024 cells): show what was touched
            ax.set_xlim(-0.5, touched + 1.5)
        if last_fault is not None and last_fault[0] == index and not (bad and bad[0] == name):
            ax.scatter(
                [last_fault[2]],
                [(last_fault[1] % per_block) if shared else last_fault[1]],
                s=260,
                marker="x",
                color=FAULT,
            )
        if bad and bad[0] == name and fault_thread is not None:
            flat = bad[2][-1] if len(bad[2]) == 1 else None
            x = flat if flat is not None else size
            ax.scatter([x], [(fault_thread % per_block) if shared else fault_thread], s=260, marker="x", color=FAULT)
            ax.annotate(f"{name}{bad[2]}", (x, (fault_thread % per_block) if shared else fault_thread), color=FAULT)
        where = f"shared memory of block {block}" if shared else "global memory"
        shown = "dashed line: its end" if size <= 1.5 * (touched + 1) + 4 else f"elements 0 to {touched + 1} shown"
        ax.set_title(f"{name} ({where}, {size} elements; {shown})", fontsize=9)
        ax.set_xlabel("element (flat index)", fontsize=8)
        ax.set_ylabel("thread of the block" if shared else "global thread id", fontsize=8)
        ax.tick_params(labelsize=7)
        handles, labels = ax.get_legend_handles_labels()
        if handles:
            ax.legend(handles[:6], labels[:6], fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return png(fig)


def swimlanes(events: list, title: str = "") -> bytes:
    """A thread interleaving as swimlanes: one column per thread, one row per step of the story the
    scheduler prints (ch13lib.sched), each step in its thread's lane with its line and what it did;
    a switch of thread is a horizontal rule; the last step (where it went wrong) in red."""
    threads: list[str] = []
    for name, *_ in events:
        if name != "..." and name not in threads:
            threads.append(name)
    threads = threads or ["main"]
    from matplotlib.patches import Rectangle

    rows = len(events)
    fig = _figure(2.0 + 3.9 * len(threads), 1.2 + 0.24 * rows)
    ax = fig.subplots()
    fig.suptitle(_title(title, 40 * len(threads) + 20) or "the interleaving", fontsize=9, color=FAULT)
    ax.set_xlim(0, len(threads))
    ax.set_ylim(rows, -0.5)
    ax.set_xticks([i + 0.5 for i in range(len(threads))], threads, fontsize=9)
    ax.xaxis.tick_top()
    ax.set_yticks(range(rows), [str(i + 1) for i in range(rows)], fontsize=6)
    ax.set_ylabel("step", fontsize=8)
    for i in range(1, len(threads)):
        ax.axvline(i, color="lightgray", linewidth=0.8)
    previous = None
    for row, (name, line, text, action) in enumerate(events):
        if name == "...":
            ax.text(len(threads) / 2, row, f"... {action} ...", ha="center", va="center", fontsize=7, color="gray")
            previous = None
            continue
        lane = threads.index(name)
        if previous is not None and previous != name:
            ax.axhline(row - 0.5, color="#ff7f0e", linewidth=0.8)
        last = row == rows - 1
        label = (f"{line}: {text[:26]}  → " if line else "") + (action or "")
        ax.add_patch(
            Rectangle(
                (lane + 0.03, row - 0.42), 0.94, 0.84, color=FAULT if last else BLOCK_COLOURS[lane % 4], alpha=0.18
            )
        )
        ax.text(lane + 0.06, row, label[:64], va="center", fontsize=6.5, color=FAULT if last else "black")
        previous = name
    ax.tick_params(length=0)
    for side in ("right", "bottom", "left"):
        ax.spines[side].set_visible(False)
    return png(fig)


def zero_memory(n_params: float, n_gpus: int, bytes_param=2, bytes_grad=2, bytes_optim=12) -> bytes:
    """Per-GPU memory of parameters, gradients and optimizer state under DDP and ZeRO-1/2/3 (the
    memory calculator of notebook 05): stacked bars, GB."""
    p, g, o = n_params * bytes_param / 1e9, n_params * bytes_grad / 1e9, n_params * bytes_optim / 1e9
    stages = ["DDP\n(ZeRO-0)", "ZeRO-1\noptimizer", "ZeRO-2\n+ gradients", "ZeRO-3\n+ parameters"]
    parts = [(p if s < 3 else p / n_gpus, g if s < 2 else g / n_gpus, o if s < 1 else o / n_gpus) for s in range(4)]
    fig = _figure(7.5, 3.8)
    ax = fig.subplots()
    bottom = [0.0] * 4
    for k, (label, colour) in enumerate(
        (("parameters", "#1f77b4"), ("gradients", "#ff7f0e"), ("optimizer state (FP32 copy + Adam m, v)", "#2ca02c"))
    ):
        values = [part[k] for part in parts]
        ax.bar(stages, values, bottom=bottom, label=label, color=colour)
        bottom = [b + v for b, v in zip(bottom, values)]
    for i, total in enumerate(bottom):
        ax.text(i, total, f"{total:,.1f} GB", ha="center", va="bottom", fontsize=8)
    ax.set_ylabel("GB per GPU", fontsize=8)
    ax.set_title(
        f"{n_params / 1e9:g}B parameters on {n_gpus} GPUs: bytes per parameter {bytes_param} + {bytes_grad} + "
        f"{bytes_optim}",
        fontsize=9,
    )
    ax.legend(fontsize=7)
    ax.tick_params(labelsize=8)
    return png(fig)


def pipeline(timeline: list, stages: int, length: float, bound: float | None = None, title: str = "") -> bytes:
    """A pipeline schedule as ranks × ticks (ch13lib.parallel_sim's timeline: rank, start, end, "F" or "B",
    first micro-batch): forward cells blue, backward orange, each labelled with its micro-batch; the
    idle rank-ticks (the bubble) stay white; GPipe's 2(m + P − 1) as a dashed line."""
    fig = _figure(min(14, 2.5 + 0.32 * max(length, 1)), 1.3 + 0.55 * stages)
    ax = fig.subplots()
    busy = 0.0
    for ev in timeline:
        r, start, end, kind, first = int(ev[0]), float(ev[1]), float(ev[2]), str(ev[3]), int(ev[4])
        if not 0 <= r < stages:
            continue
        busy += end - start
        colour = "#1f77b4" if kind == "F" else "#ff7f0e"
        for j in range(max(1, round(end - start))):
            ax.add_patch(_rect((start + j, r - 0.4), 1, 0.8, colour))
            ax.text(start + j + 0.5, r, f"{kind}{first + j}", ha="center", va="center", fontsize=7, color="white")
    if bound is not None:
        ax.axvline(bound, color=FAULT, linestyle="--", linewidth=1)
        ax.text(bound, -0.75, f" GPipe: {bound:g} ticks", color=FAULT, fontsize=7, va="bottom")
    idle = stages * length - busy
    ax.set_xlim(0, max(length, bound or 0) + 0.5)
    ax.set_ylim(stages - 0.5, -0.9)
    ax.set_yticks(range(stages), [f"rank {r}" for r in range(stages)], fontsize=8)
    ax.set_xlabel("tick", fontsize=8)
    ax.tick_params(labelsize=7)
    bubble = f"; bubble {idle / (stages * length):.0%} of the rank-ticks" if length else ""
    head = _title(title, 120, 2) + "\n" if title else ""
    fig.suptitle(f"{head}{length:g} ticks{bubble} (F = forward, B = backward of a micro-batch)", fontsize=9)
    return png(fig)


def _rect(xy, w, h, colour):
    from matplotlib.patches import Rectangle

    return Rectangle(xy, w, h, color=colour, alpha=0.9)


def ring(messages: list, world_size: int, numel: int, title: str = "") -> bytes:
    """Who sent what at each step of a collective built from messages: one row per rank, one column
    per send of that rank, each cell the destination and which chunk of the rank's own tensor it was
    (chunk k = elements [k·⌈n/W⌉, (k+1)·⌈n/W⌉); "copy" when it was not a view of the tensor)."""
    chunk = max(1, -(-numel // max(world_size, 1)))
    steps = 1 + max([m[1] for m in messages] + [0])
    width = min(14, max(8, 2.5 + 1.1 * steps))
    fig = _figure(width, 1.5 + 0.6 * world_size)
    ax = fig.subplots()
    sent = [0] * world_size
    for r, k, dst, n, first in messages:
        if not 0 <= r < world_size:
            continue
        sent[r] += n
        c = first // chunk if first >= 0 else None
        colour = FAULT if n > chunk else BLOCK_COLOURS[c % len(BLOCK_COLOURS)] if c is not None else "gray"
        ax.add_patch(_rect((k + 0.05, r - 0.4), 0.9, 0.8, colour))
        what = "whole tensor" if n >= numel and n > chunk else f"chunk {c}" if c is not None else f"{n} el. (a copy)"
        ax.text(k + 0.5, r, f"→ {dst}\n{what}", ha="center", va="center", fontsize=7, color="white")
    ax.set_xlim(0, steps)
    ax.set_xticks([k + 0.5 for k in range(steps)], [str(k + 1) for k in range(steps)])
    ax.set_ylim(world_size - 0.5, -0.5)
    ax.set_yticks(range(world_size), [f"rank {r}: {sent[r]} el." for r in range(world_size)], fontsize=8)
    ax.set_xlabel("the rank's n-th send", fontsize=8)
    ax.tick_params(labelsize=7)
    bound = 2 * (world_size - 1) * chunk
    head = _title(title, int(width * 13), 2) + "\n" if title else ""
    fig.suptitle(
        f"{head}a ring sends at most 2·(W−1)·⌈n/W⌉ = {bound} elements per rank (red: more than a chunk)", fontsize=8
    )
    return png(fig)


def show(picture: bytes) -> None:
    """Display a PNG in the notebook (nothing outside IPython)."""
    try:
        from IPython.display import Image, display
    except ImportError:
        return
    try:
        display(Image(data=picture))
    except Exception:  # noqa: BLE001 - no frontend: the text above says it all
        pass
