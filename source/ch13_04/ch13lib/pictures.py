"""Pictures a student reads at a glance: drawn from the plain observations the checks already make.

Each function takes plain data (lists, dicts, numbers: what crosses from the grading subject to the
judge) and returns PNG bytes, drawn with matplotlib's Agg backend (no display needed). The hidden
graders attach them to a failure's feedback; the self-checks show them under a ✘ line
(:func:`show`). Nothing here runs the student's code.
"""

from __future__ import annotations

import contextlib
import functools
import io
import logging
import re
import unicodedata
import warnings

from ch13lib.lang import language

MAX_ARRAYS = 4  # panels in a picture of CUDA accesses
MAX_PHASES = 3  # barrier phases shown for a race on shared memory (the racing one last)
BLOCK_COLOURS = ("#1f77b4", "#2ca02c", "#9467bd", "#8c564b")
FAULT = "#d62728"
OTHER = "#ff7f0e"
# fonts with Chinese glyphs, tried after DejaVu Sans (the first one installed draws what DejaVu cannot;
# with none, matplotlib draws boxes for the Chinese characters and nothing fails)
CJK_FONTS = (
    "Noto Sans CJK SC",
    "Noto Sans SC",
    "Source Han Sans SC",
    "WenQuanYi Zen Hei",
    "WenQuanYi Micro Hei",
    "SimHei",
    "Microsoft YaHei",
    "PingFang SC",
    "Heiti SC",
    "Arial Unicode MS",
)
# fixed words on a picture, Chinese first (the course's language), each short
THIS_THREAD = "这个线程 / this thread"
OTHER_THREAD = "另一个线程 / the other thread"
KINDS = {"r": "read", "w": "write", "a": "atomic"}
WIDE = 1.7  # columns a Chinese character takes
TITLE_PT = 9
CAPTION_PT = 7.5
CAPTION_LINES = 4  # per language: whole sentences that fit; the text beside the picture says the rest


def _figure(width: float, height: float):
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=80, layout="constrained")


@functools.lru_cache(maxsize=1)
def _cjk_fonts() -> tuple:
    try:
        from matplotlib import font_manager

        manager = font_manager.fontManager
        installed = {f.name for f in manager.ttflist}
        if not installed & set(CJK_FONTS):
            # matplotlib keeps the font list it made on its first run: a font installed since is
            # found on the disk itself
            known = {f.fname for f in manager.ttflist}
            for path in font_manager.findSystemFonts():
                if path not in known:
                    with contextlib.suppress(Exception):
                        manager.addfont(path)
            installed = {f.name for f in manager.ttflist}
    except Exception:  # noqa: BLE001 - no font list: DejaVu alone, Chinese as boxes
        return ()
    return tuple(name for name in CJK_FONTS if name in installed)


@contextlib.contextmanager
def _fonts():
    """DejaVu Sans, then a Chinese font if one is installed (matplotlib falls back glyph by glyph);
    the warnings about a missing glyph or weight stay out of the student's output."""
    import matplotlib

    fm_log = logging.getLogger("matplotlib.font_manager")
    level = fm_log.level
    fm_log.setLevel(logging.ERROR)
    try:
        with matplotlib.rc_context({"font.family": ["DejaVu Sans", *_cjk_fonts()]}), warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Glyph .* missing")
            warnings.filterwarnings("ignore", message="findfont")
            yield
    finally:
        fm_log.setLevel(level)


def _drawn(draw):
    """A drawing function run with the fonts above (text takes its font when it is made, so the whole
    drawing runs inside)."""

    @functools.wraps(draw)
    def run(*args, **kwargs):
        with _fonts():
            return draw(*args, **kwargs)

    return run


_CHINESE_HALF = re.compile(r"(?:[\u2e80-\u9fff\uff00-\uffef]+\s*)+/\s*")


def english(text: str) -> str:
    """A fixed label "中文 / English" as its English half (for a machine with no Chinese font)."""
    return _CHINESE_HALF.sub("", text)


def png(fig) -> bytes:
    out = io.BytesIO()
    if not _cjk_fonts():  # the fixed labels' English halves rather than boxes
        from matplotlib.text import Text

        for t in fig.findobj(Text):
            t.set_text(english(t.get_text()))
    with _fonts():
        fig.savefig(out, format="png")
    return out.getvalue()


# ---- text: whole words, whole sentences ----------------------------------------------------------

_CJK = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]")
_CLOSING = "，。、：；！？）》」』】,.:;!?)"
_TOKEN = re.compile(
    r"\s+|[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef][%s]*|[^\s\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]+"
    % re.escape(_CLOSING)
)  # noqa: E501
_SENTENCE_END = re.compile(r"(?<=[。！？])\s*|(?<=[.!?])\s+(?=[A-Z\u2e80-\u9fff])")


def columns(text: str) -> float:
    """How wide ``text`` draws, in columns (a column: an average Latin character, about 0.6 of the
    font size); a Chinese character (East Asian wide) takes a whole em, 1.7 columns."""
    return sum(WIDE if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def columns_for(width_in: float, fontsize: float) -> int:
    """Columns of ``fontsize``-point text a ``width_in``-inch figure holds (DejaVu Sans: a column is
    about 0.6 of the size; margins kept)."""
    return max(20, int(width_in * 72 * 0.92 / (0.6 * fontsize)))


def wrap(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` columns, broken between words (and between Chinese
    characters, never before a closing punctuation mark); a single word wider than a line is the only
    thing ever broken inside."""
    lines: list[str] = []
    for para in (text or "").splitlines():
        line = ""
        for tok in _TOKEN.findall(para):
            if tok.isspace():
                if line:
                    line += " "
                continue
            while columns(tok) > width:  # a path or a number longer than the line: nothing else to do
                if line.strip():
                    lines.append(line.rstrip())
                    line = ""
                cut = len(tok)
                while columns(tok[:cut]) > width:
                    cut -= 1
                lines.append(tok[:cut])
                tok = tok[cut:]
            if columns(line + tok) > width and line.strip():
                lines.append(line.rstrip())
                line = ""
            line += tok
        if line.strip():
            lines.append(line.rstrip())
    return lines


def sentences(text: str) -> list[str]:
    """``text``'s sentences (after 。！？, or after . ! ? before a capital or a Chinese character)."""
    return [s.strip() for s in _SENTENCE_END.split((text or "").strip()) if s and s.strip()]


def _has_cjk(text: str) -> bool:
    return bool(_CJK.search(text or ""))


def headline(message: str) -> list[str]:
    """The sentence(s) a picture's title is made of: the message's first line, and in a message that
    says it in both languages (Chinese lines, then English lines) the first English line too; without
    a Chinese font, only the English one."""
    lines = [x.strip() for x in (message or "").strip().splitlines()]
    if not lines or not lines[0]:
        return []
    said = [lines[0]]
    if _has_cjk(lines[0]) and language() == "both":  # else a line without Chinese is code (a replay)
        english_lines = [x for x in lines[1:] if x and not _has_cjk(x)]
        if english_lines:
            said.append(english_lines[0])
            if not _cjk_fonts():
                said = said[1:]
    return said


def title_and_caption(message: str, width: int, caption_width: int | None = None) -> tuple[list[str], list[str]]:
    """A picture's title (the first sentence of each language, wrapped to ``width`` columns, never
    cut) and its caption below the figure (the sentences after it, wrapped, as many whole sentences
    as fit in CAPTION_LINES lines per language)."""
    title: list[str] = []
    caption: list[str] = []
    caption_width = caption_width or width
    for said in headline(message):
        parts = sentences(said)
        if not parts:
            continue
        title += wrap(parts[0], width)
        kept: list[str] = []
        for s in parts[1:]:
            trial = wrap(" ".join([*kept, s]) if not _has_cjk(s) else "".join(kept) + s, caption_width)
            if len(trial) > CAPTION_LINES:
                break
            kept.append(s)
        if kept:
            caption += wrap(" ".join(kept) if not _has_cjk(kept[0]) else "".join(kept), caption_width)
    return title, caption


def _heading(fig, message: str, width_in: float, fallback: str = "", colour=FAULT, below: str = "") -> float:
    """Title (and caption) of ``fig`` from ``message``; ``below``: a fixed line of the picture's own
    under the title. Returns the height in inches they take, for the figure to grow by."""
    title, caption = title_and_caption(message, columns_for(width_in, TITLE_PT), columns_for(width_in, CAPTION_PT))
    head = "\n".join(title) or fallback
    if below:
        head = (head + "\n" if head else "") + "\n".join(wrap(below, columns_for(width_in, TITLE_PT)))
    if head:
        fig.suptitle(head, fontsize=TITLE_PT, color=colour if title else "black")
    if caption:
        fig.supxlabel("\n".join(caption), fontsize=CAPTION_PT, color="#444444", x=0.01, ha="left")
    n_title = head.count("\n") + 1 if head else 0
    return (n_title * TITLE_PT + len(caption) * CAPTION_PT) * 1.35 / 72


# ---- CUDA accesses --------------------------------------------------------------------------------


def phases(events: list, per_block: int) -> list[int]:
    """The barrier phase of each logged access, derived from the log's order: the checking simulator
    runs a block's threads one after another up to their next cuda.syncthreads(), in thread order, so
    within a block a phase ends where the thread number drops. (Phases in which the next phase's first
    thread comes after the last one's thread show as one.)"""
    out: list[int] = []
    block = last = None
    phase = 0
    for e in events:
        b, t = divmod(int(e[1]), max(per_block, 1))
        if b != block:
            block, phase = b, 0
        elif t < last:
            phase += 1
        last = t
        out.append(phase)
    return out


def race(accesses: dict, message: str = "") -> dict | None:
    """Where the fault the message reports happened, from the access record: ``array`` (index into
    ``arrays``), ``pos`` (flat element), ``thread`` (global id of the faulting thread), ``others``
    (the other threads' conflicting accesses of that element: events ``[array, gid, pos, kind]``,
    in the fault's barrier phase for shared memory) and ``phase`` (that phase, or None). The array and
    element are those the message names (``bins[4]``): the out-of-bounds index, else the first
    ``name[i]`` in the message that names a recorded array. None when neither is known."""
    arrays = accesses.get("arrays") or []
    events = accesses.get("events") or []
    fault_thread = accesses.get("fault_thread")
    if fault_thread is None or not arrays:
        return None
    per_block = 1
    for d in accesses.get("blockdim") or [1]:
        per_block *= int(d)
    bad = accesses.get("bad_index")
    names = [a[0] for a in arrays]
    if bad:
        if bad[0] not in names:
            return None
        index, idx = names.index(bad[0]), [int(i) for i in bad[2]]
    else:
        found = None
        for i, name in enumerate(names):
            m = re.search(r"(?<![\w.])%s\[(-?\d+(?:,\s*-?\d+)*)\]" % re.escape(name), message or "")
            if m and (found is None or m.start() < found[0]):
                found = (m.start(), i, [int(x) for x in m.group(1).split(",")])
        if found is None:
            return None
        _, index, idx = found
    size = int(arrays[index][3])
    shared = arrays[index][1] == "shared"
    block = int(fault_thread) // per_block
    phase_of = phases(events, per_block)
    mine = [e for e in events if e[1] == fault_thread]
    own = mine[-1] if mine and mine[-1][0] == index and mine[-1][3] in "wa" else None  # a write logs first
    pos = None
    if bad:
        pos = idx[0] if len(idx) == 1 else None
    elif len(idx) == 1:
        pos = idx[0] + size if idx[0] < 0 else idx[0]
    elif own is not None:
        pos = own[2]
    elif len(idx) == 2:  # a row length that divides the size and puts another thread's write there
        writes = {e[2] for e in events if e[0] == index and e[1] != fault_thread and e[3] in "wa"}
        fits = [idx[0] * c + idx[1] for c in range(idx[1] + 1, size + 1) if size % c == 0]
        pos = next((p for p in fits if p in writes), None)
    phase = None
    others: list = []
    if pos is not None and not bad:
        wrote = own is not None and own[2] == pos
        in_block = [(e, ph) for e, ph in zip(events, phase_of) if int(e[1]) // per_block == block]
        if shared:
            phase = in_block[-1][1] if in_block else 0
            cands = [e for e, ph in in_block if ph == phase]
        else:
            cands = events
        cands = [e for e in cands if e[0] == index and e[2] == pos and e[1] != fault_thread]
        if not wrote or not shared:  # a read races with writes; on global memory the record keeps writers
            cands = [e for e in cands if e[3] in "wa"] or ([] if shared else cands)
        others = [list(e) for e in cands]
    return {
        "array": index,
        "pos": pos,
        "index": idx,
        "thread": int(fault_thread),
        "others": others,
        "phase": phase,
        "shared": shared,
        "out_of_bounds": bool(bad),
    }


def _scatter_kinds(ax, mine, y, per_block, fault_thread):
    for kind, marker, size_pt in (("r", ".", 30), ("w", "s", 22), ("a", "^", 26)):
        for b in sorted({e[1] // per_block for e in mine}):
            pts = [e for e in mine if e[3] == kind and e[1] // per_block == b and e[1] != fault_thread]
            if pts:
                ax.scatter(
                    [e[2] for e in pts],
                    [y(e[1]) for e in pts],
                    s=size_pt,
                    marker=marker,
                    color=BLOCK_COLOURS[b % len(BLOCK_COLOURS)],
                    label=f"{KINDS[kind]}, block {b}",
                    alpha=0.8,
                )
        pts = [e for e in mine if e[3] == kind and e[1] == fault_thread]
        if pts:
            ax.scatter(
                [e[2] for e in pts],
                [y(e[1]) for e in pts],
                s=size_pt * 1.6,
                marker=marker,
                color=FAULT,
                label=f"{KINDS[kind]}, {THIS_THREAD}",
            )


def _mark_race(ax, where: dict, name: str, y, size: int) -> None:
    """The faulting access (a red cross, at the element the message names) and the other thread's
    conflicting accesses (orange circles), with the legend saying which is which."""
    x = where["pos"] if where["pos"] is not None else size
    ax.scatter([x], [y(where["thread"])], s=260, marker="x", color=FAULT, label=THIS_THREAD, zorder=5)
    label = f"{name}[{', '.join(map(str, where['index']))}]"
    ax.annotate(
        label, (x, y(where["thread"])), xytext=(10, -4), textcoords="offset points", va="top", color=FAULT, fontsize=8
    )
    if where["others"]:
        ax.scatter(
            [e[2] for e in where["others"]],
            [y(e[1]) for e in where["others"]],
            s=240,
            marker="o",
            facecolors="none",
            edgecolors=OTHER,
            linewidths=2,
            label=OTHER_THREAD,
            zorder=5,
        )


def _panel_axes(ax, mine, size, extra=()):
    touched = max([e[2] for e in mine] + list(extra) + [0])
    if size <= 1.5 * (touched + 1) + 4:
        ax.axvline(size - 0.5, color="gray", linestyle="--", linewidth=0.8)
        return f"{size}"
    ax.set_xlim(-0.5, touched + 1.5)  # a big array touched at its start (a shared array of 1024 cells)
    return f"{size}; 0–{touched + 1}"


def _legend(ax):
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        seen = {}
        for h, lab in zip(handles, labels):
            seen.setdefault(lab, h)
        marks = [lab for lab in seen if lab in (THIS_THREAD, OTHER_THREAD)]
        rest = [lab for lab in seen if lab not in marks][: 6 - len(marks)]
        keep = marks + rest
        ax.legend([seen[k] for k in keep], keep, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))


@_drawn
def cuda_accesses(accesses: dict, message: str = "") -> bytes:
    """Which thread read (dot), wrote (square) or atomically updated (triangle) which element, one
    panel per array (global arrays by global thread id, shared arrays by thread of the block), up
    to a fault of the checking simulator (ch13lib.cuda_sim): the faulting thread in red, its access of
    the element the message names marked with a red cross on that array's panel, the other thread's
    conflicting access of it with an orange circle. A race on shared memory shows that array phase by
    phase (between cuda.syncthreads()), the racing phase last."""
    arrays = accesses.get("arrays") or []
    events = accesses.get("events") or []
    per_block = 1
    for d in accesses.get("blockdim") or [1]:
        per_block *= int(d)
    fault_thread = accesses.get("fault_thread")
    where = race(accesses, message)
    used = sorted({e[0] for e in events} | ({where["array"]} if where else set()))
    last_fault = next((e for e in reversed(events) if e[1] == fault_thread), None)
    first = where["array"] if where else (last_fault[0] if last_fault else None)
    order = ([first] if first is not None else []) + [i for i in used if i != first]
    order = order[:MAX_ARRAYS] or [None]
    # a race on shared memory: that array by phase (between barriers), the racing phase last
    by_phase: list = []
    if where and where["shared"] and where["phase"] is not None and not where["out_of_bounds"]:
        block = where["thread"] // per_block
        phase_of = phases(events, per_block)
        shown = sorted(
            {ph for e, ph in zip(events, phase_of) if e[0] == where["array"] and e[1] // per_block == block}
            | {where["phase"]}
        )
        shown = [ph for ph in shown if ph <= where["phase"]][-MAX_PHASES:]
        by_phase = [
            (
                ph,
                [
                    e
                    for e, p in zip(events, phase_of)
                    if p == ph and e[0] == where["array"] and e[1] // per_block == block
                ],
            )
            for ph in shown
        ]
    from matplotlib.ticker import MaxNLocator

    panels = [("phase", p) for p in by_phase] + [("array", i) for i in order if not (by_phase and i == first)]
    panels = panels[: MAX_ARRAYS + MAX_PHASES - 1]
    width = 9.5
    fig = _figure(width, 1 + 2.1 * len(panels))
    grow = _heading(fig, message, width, "accesses of one launch")
    fig.set_figheight(1 + 2.1 * len(panels) + grow)
    axes = fig.subplots(len(panels), 1, squeeze=False)[:, 0]
    for ax, (what, item) in zip(axes, panels):
        if what == "array" and item is None:
            ax.text(0.5, 0.5, "no array access was recorded", ha="center", va="center")
            ax.set_axis_off()
            continue
        index = where["array"] if what == "phase" else item
        name, space, block, size = arrays[index]
        shared = space == "shared"

        def y(gid, shared=shared):
            return (gid % per_block) if shared else gid

        mine = item[1] if what == "phase" else [e for e in events if e[0] == index]
        _scatter_kinds(ax, mine, y, per_block, fault_thread)
        is_fault_panel = (
            where is not None and index == where["array"] and (what == "array" or item[0] == where["phase"])
        )
        extra = [where["pos"]] if is_fault_panel and where["pos"] is not None else []
        shown_size = _panel_axes(ax, mine, size, extra)
        if is_fault_panel:
            _mark_race(ax, where, name, y, size)
        elif where is None and last_fault is not None and last_fault[0] == index and what == "array":
            ax.scatter([last_fault[2]], [y(last_fault[1])], s=260, marker="x", color=FAULT, label=THIS_THREAD)
        space_words = f"共享 / shared, block {block}" if shared else "全局 / global"
        if what == "phase":
            ph = item[0]
            race_words = " — 竞争 / race" if ph == where["phase"] else ""
            ax.set_title(f"{name} ({space_words}, {shown_size}) · 阶段 / phase {ph + 1}{race_words}", fontsize=9)
        else:
            ax.set_title(f"{name} ({space_words}, {shown_size})", fontsize=9)
        ax.set_xlabel("元素 / element", fontsize=8)
        ax.set_ylabel("线程 / thread" if shared else "线程 / thread (global)", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        _legend(ax)
    return png(fig)


def _short(text: str, n: int) -> str:
    """``text`` in at most ``n`` characters: whole words, "…" where some were left off."""
    text = text or ""
    if len(text) <= n:
        return text
    cut = text.rfind(" ", 0, n)
    return (text[:cut] if cut > n // 2 else text[: n - 1]).rstrip() + "…"


@_drawn
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
    width = 2.0 + 3.9 * len(threads)
    fig = _figure(width, 1.2 + 0.24 * rows)
    fig.set_figheight(1.0 + 0.24 * rows + _heading(fig, title, width, "the interleaving"))
    ax = fig.subplots()
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
        label = (f"{line}: {_short(text, 26)}  → " if line else "") + (action or "")
        ax.add_patch(
            Rectangle(
                (lane + 0.03, row - 0.42), 0.94, 0.84, color=FAULT if last else BLOCK_COLOURS[lane % 4], alpha=0.18
            )
        )
        ax.text(lane + 0.06, row, _short(label, 64), va="center", fontsize=6.5, color=FAULT if last else "black")
        previous = name
    ax.tick_params(length=0)
    for side in ("right", "bottom", "left"):
        ax.spines[side].set_visible(False)
    return png(fig)


@_drawn
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


@_drawn
def pipeline(timeline: list, stages: int, length: float, bound: float | None = None, title: str = "") -> bytes:
    """A pipeline schedule as ranks × ticks (ch13lib.parallel_sim's timeline: rank, start, end, "F" or "B",
    first micro-batch): forward cells blue, backward orange, each labelled with its micro-batch; the
    idle rank-ticks (the bubble) stay white; GPipe's 2(m + P − 1) as a dashed line."""
    width = min(14, max(8, 2.5 + 0.32 * max(length, 1)))
    fig = _figure(width, 1.3 + 0.55 * stages)
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
    bubble = f"; 空闲 / bubble {idle / (stages * length):.0%}" if length else ""
    ours = f"{length:g} 拍 / ticks{bubble} (F = forward, B = backward)"
    fig.set_figheight(1.0 + 0.55 * stages + _heading(fig, title, width, below=ours))
    return png(fig)


def _rect(xy, w, h, colour):
    from matplotlib.patches import Rectangle

    return Rectangle(xy, w, h, color=colour, alpha=0.9)


@_drawn
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
    ours = f"环 / ring: ≤ 2·(W−1)·⌈n/W⌉ = {bound} el. / rank (红 / red: > 1 chunk)"
    fig.set_figheight(1.3 + 0.6 * world_size + _heading(fig, title, width, below=ours))
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
