"""Pictures in the self-checks and the feedback (ch13lib/pictures.py): drawn from plain data, carried
from the judge's result line into the test cell's outputs, and shown in the TA's report."""

from __future__ import annotations

import base64
import os

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from kit import source_ch13lib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
source_ch13lib()  # the copy beside the notebooks

from ch13lib import pictures  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


def test_each_picture_is_a_png_drawn_from_plain_data():
    accesses = {
        "arrays": [["cache", "shared", 0, 8], ["a", "global", 0, 8]],
        "events": [[1, 0, 0, "r"], [0, 0, 0, "w"], [0, 1, 1, "w"], [0, 0, 1, "r"], [0, 1, 1, "w"]],
        "blockdim": [8, 1, 1],
        "griddim": [1, 1, 1],
        "bad_index": None,
        "fault_thread": 1,
    }
    lanes = [
        ["main", 10, "c = Counter()", "wrote c"],
        ["...", 0, "", "3 more steps"],
        ["T1", 13, "x += 1", "read x = 0"],
    ]
    for png in (
        pictures.cuda_accesses(accesses, "thread 1 of block 0: a data race"),
        pictures.cuda_accesses({**accesses, "bad_index": ["a", "global", [9]]}, "read a[9]: out of bounds"),
        pictures.swimlanes(lanes, "an update was lost"),
        pictures.zero_memory(70e9, 8),
        pictures.pipeline([[0, 0, 1, "F", 0], [1, 1, 2, "F", 0], [1, 2, 3, "B", 0], [0, 3, 4, "B", 0]], 2, 4, 4),
        pictures.ring([[0, 0, 1, 2, 0], [1, 0, 0, 2, -1], [0, 1, 1, 8, 0]], 2, 8, "rank 0 sent 10 elements"),
    ):
        assert png.startswith(PNG) and 5_000 < len(png) < 400_000


@pytest.fixture(scope="module")
def autograded_folder(tmp_path_factory):
    return tmp_path_factory.mktemp("course") / "autograded" / "s1" / "ch13_04"


@pytest.fixture(scope="module")
def graded_histogram(autograded_folder):
    """The ExternalGrade preprocessor (what `nbgrader autograde` runs) on a notebook whose histogram
    is the unprotected `bins[v] += 1`: a sandboxed judge and subject, as in a real autograde, whose
    autograded notebook (with its verdicts beside it) is in ``autograded_folder``."""
    from graders._catalogue import source as catalogue_source
    from kit.external_grade import ExternalGrade

    source = catalogue_source("histogram", "wrong_plain_increment")
    answer = new_code_cell(source, metadata={"nbgrader": {"grade_id": "histogram", "solution": True}})
    test = new_code_cell(
        "# hidden tests", metadata={"nbgrader": {"grade_id": "test_histogram", "grade": True, "points": 8}}
    )
    nb = new_notebook(cells=[answer, test])
    autograded_folder.mkdir(parents=True)
    ExternalGrade().preprocess(nb, {"metadata": {"path": str(autograded_folder), "name": "02_cuda_kernels"}})
    nbformat.write(nb, str(autograded_folder / "02_cuda_kernels.ipynb"))
    return nb


def test_a_fault_reaches_the_feedback_as_an_image(graded_histogram):
    outputs = graded_histogram.cells[1].outputs
    images = [o for o in outputs if o.output_type == "display_data" and "image/png" in o.data]
    assert images and base64.b64decode(images[0].data["image/png"]).startswith(PNG)
    assert "<picture: " in images[0].data["text/plain"]
    assert outputs[-1].output_type == "execute_result"  # nbgrader still reads the partial credit last
    assert "read-modify-write" in outputs[0].text


def test_the_report_shows_the_picture_of_a_common_failure(graded_histogram, autograded_folder):
    from kit import report

    root = autograded_folder.parents[2]

    class Course:
        def path(self, *parts):
            return str(root.joinpath(*parts))

    pictures_seen: dict = {}
    report._failures(Course(), ["s1"], pictures_seen)
    assert pictures_seen and all(v for v in pictures_seen.values())
    # read from the verdicts file beside the notebook: the pictures its test cell shows
    shown = {o.data["image/png"] for o in graded_histogram.cells[1].outputs if o.output_type == "display_data"}
    assert set(pictures_seen.values()) <= shown


# ---- pictures a student can read: whole titles, the race where the message says it is -------------

# the checking simulator in a child process (NUMBA_ENABLE_CUDASIM must be set before numba's first
# import): the access record and message of a catalogue answer's fault, as the feedback gets them
RECORD = """
import json, linecache, os, sys
os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
import kit; kit.source_ch13lib()
from ch13lib import cuda_check as cc
from graders._catalogue import source
out = {}
for key, (grade_id, name, check, kernel, launcher, args) in json.loads(sys.argv[1]).items():
    src = source(grade_id, name)
    fn = f"<{name}>"
    linecache.cache[fn] = (len(src), None, src.splitlines(True), fn)
    ns = {"__name__": "cell"}
    exec(compile(src, fn, "exec"), ns)
    try:
        getattr(cc, check)(cc.local(**{kernel: ns[kernel], launcher: ns[launcher]}), *args)
    except cc.CheckFailed as e:
        out[key] = {"message": str(e), "accesses": e.accesses}
print(json.dumps(out))
"""
CASES = {
    # bins[v] += 1 on global memory: "... wrote bins[4] ..., which thread 1 of block 0 also updated"
    "global": (
        "histogram",
        "wrong_plain_increment",
        "check_histogram",
        "histogram_kernel",
        "launch_histogram",
        [300, 7, 64],
    ),  # noqa: E501
    # local[v] += 1 on shared memory: the faulting read is not logged; its thread's last access is on data
    "shared": (
        "histogram",
        "wrong_shared_plain_increment",
        "check_histogram",
        "histogram_kernel",
        "launch_histogram",
        [300, 7, 64],
    ),  # noqa: E501
    # no barrier inside the reduction tree: thread 1 writes cache[1] that thread 0 read in the same phase
    "tree": ("dot_reduction", "wrong_no_barrier_in_tree", "check_dot", "dot_kernel", "launch_dot", [300, 64]),
}


@pytest.fixture(scope="module")
def records():
    import json
    import subprocess
    import sys

    run = subprocess.run(
        [sys.executable, "-c", RECORD, json.dumps(CASES)], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-3000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert set(got) == set(CASES), got.keys()
    return got


@pytest.fixture
def drawn(monkeypatch):
    """The figures the pictures draw (pictures.png records each, then makes its PNG as usual)."""
    figures = []
    make = pictures.png

    def keep(fig):
        figures.append(fig)
        return make(fig)

    monkeypatch.setattr(pictures, "png", keep)
    return figures


def _marks(fig, label):
    """(axes title, offsets) of each scatter labelled ``label``."""
    return [
        (ax.get_title(), [tuple(map(float, xy)) for xy in c.get_offsets()])
        for ax in fig.axes
        for c in ax.collections
        if c.get_label() == label
    ]


def _words(text):
    return [w for w in text.replace("\n", " ").split(" ") if w]


LONG = (
    "P=3 stages, m=4 micro-batches of 1 row, widths [3, 3, 3, 3], loss mse: rank 0's stage ran backward on 0 "
    "micro-batches' worth of rows, not 4: call the stage itself (stage(x)) for the forward and backward of every "
    "micro-batch; running a module found inside it, or its parameters by hand, skips the work the schedule is "
    "measured on. Replay: check_pipeline_case(gpipe_step, stages=3, n_micro=4, micro_rows=1, widths=(3, 3, 3, 3), "
    "loss='mse', seed=0, grad_init=False, policy='stay', schedule_seed=0)"
)


def test_a_long_title_is_wrapped_whole_never_cut(drawn):
    """07's forward-only pipeline: the problem's first sentence is the title, wrapped to the figure's
    width in whole words; what follows is a caption below, in whole sentences."""
    forward_only = [[r, r + i, r + i + 1, "F", i] for r in range(3) for i in range(4)]
    pictures.pipeline(forward_only, 3, 6.0, 12, LONG)
    fig = drawn[-1]
    width = pictures.columns_for(fig.get_figwidth(), pictures.TITLE_PT)
    lines = fig._suptitle.get_text().splitlines()
    assert all(pictures.columns(x) <= width for x in lines), lines
    first = LONG[: LONG.index(" Replay:")]
    assert _words(fig._suptitle.get_text())[: len(_words(first))] == _words(first)  # the whole sentence, every word
    assert "…" not in fig._suptitle.get_text() and "..." not in fig._suptitle.get_text()
    assert _words(fig._supxlabel.get_text()) == _words(LONG[LONG.index("Replay:") :])


def test_a_chinese_title_wraps_between_characters_and_keeps_english_words_whole():
    zh = (
        "线程块 0 的线程 2 (threadIdx.x=2, blockIdx.x=0): 读取 local[4] 时, 同一线程块的线程 1在同一阶段写入了它" * 3
        + "。后面。"
    )
    en = "Thread 2 of block 0 read local[4] in the same phase as thread 1 of the same block wrote it. " * 3
    title, caption = pictures.title_and_caption(zh + "\n" + en.strip() + "\nIt ran: f(x)", 60)
    assert all(pictures.columns(x) <= 60 for x in title)
    assert "".join(title).replace(" ", "").startswith(zh.split("。")[0].replace(" ", ""))
    english = [x for x in title if not pictures._has_cjk(x)]
    if pictures._cjk_fonts():
        assert "".join(t for t in title if pictures._has_cjk(t)).replace(" ", "").endswith("写入了它。")
    assert _words(" ".join(english)) == _words(en.split(". ")[0] + ".")  # no word cut
    assert all("It ran" not in x for x in title + caption)


def test_without_a_chinese_font_nothing_fails_and_the_labels_say_english(records, drawn, monkeypatch):
    monkeypatch.setattr(pictures, "_cjk_fonts", lambda: ())
    rec = records["shared"]
    assert pictures.cuda_accesses(rec["accesses"], rec["message"]).startswith(PNG)
    assert pictures.swimlanes([["T1", 3, "x += 1", "read x = 0"]], "线程 T1 的一次更新丢失了。").startswith(PNG)
    texts = [t.get_text() for t in drawn[0].findobj(lambda a: hasattr(a, "get_text"))]
    assert not any(pictures._has_cjk(t) for t in texts), [t for t in texts if pictures._has_cjk(t)]
    assert any(t == pictures.english(pictures.THIS_THREAD) == "this thread" for t in texts)


@pytest.mark.parametrize(
    "case, name, element, this, other",
    [
        ("global", "bins", 4, 2, 1),  # global ids
        ("shared", "local", 4, 2, 1),  # threads of the block
        ("tree", "cache", 1, 1, 0),
    ],
)
def test_the_race_is_marked_on_the_array_the_message_names_with_both_threads(
    records, drawn, case, name, element, this, other
):
    rec = records[case]
    assert f"{name}[{element}]" in rec["message"]
    where = pictures.race(rec["accesses"], rec["message"])
    assert rec["accesses"]["arrays"][where["array"]][0] == name and where["pos"] == element
    assert where["thread"] % 64 == this and {e[1] % 64 for e in where["others"]} == {other}
    assert all(e[2] == element and e[0] == where["array"] for e in where["others"])
    pictures.cuda_accesses(rec["accesses"], rec["message"])
    fig = drawn[-1]
    mine, theirs = _marks(fig, pictures.THIS_THREAD), _marks(fig, pictures.OTHER_THREAD)
    assert [t for t, _ in mine] == [t for t, _ in theirs] and len(mine) == 1  # one panel holds both marks
    panel, at = mine[0]
    assert panel.startswith(f"{name} ") and at == [(element, this)]
    assert theirs[0][1] == [(element, other)]
    legend = [t.get_text() for ax in fig.axes if ax.get_title() == panel for t in ax.get_legend().get_texts()]
    assert pictures.THIS_THREAD in legend and pictures.OTHER_THREAD in legend


def test_a_missing_barrier_is_shown_phase_by_phase(records, drawn):
    """The tree without its barriers: the load is phase 1, the whole tree is phase 2, where thread 0 read
    cache[1] before thread 1 wrote it."""
    rec = records["tree"]
    events = rec["accesses"]["events"]
    assert pictures.phases(events, 64)[0] == 0 and max(pictures.phases(events, 64)) == 1
    assert pictures.race(rec["accesses"], rec["message"])["phase"] == 1
    pictures.cuda_accesses(rec["accesses"], rec["message"])
    titles = [ax.get_title() for ax in drawn[-1].axes]
    assert [t for t in titles if t.startswith("cache ")] == [t for t in titles if "phase" in t] and len(
        [t for t in titles if "phase" in t]
    ) == 2
    assert "phase 2" in _marks(drawn[-1], pictures.THIS_THREAD)[0][0]
    loaded = [c for ax in drawn[-1].axes if "phase 1" in ax.get_title() for c in ax.collections]
    assert sorted(x for c in loaded for x, _ in c.get_offsets()) == list(range(64))  # each thread its own cell


def test_a_font_installed_after_matplotlib_listed_its_fonts_is_found(monkeypatch):
    """matplotlib keeps the font list of its first run on disk: a Chinese font installed later (the
    TA's `apt-get install fonts-wqy-zenhei`) is looked up on the disk itself. Played here with a
    font matplotlib ships, taken out of its list."""
    import matplotlib
    from matplotlib import font_manager

    manager = font_manager.fontManager
    path = os.path.join(matplotlib.get_data_path(), "fonts", "ttf", "DejaVuSerif.ttf")
    monkeypatch.setattr(manager, "ttflist", [f for f in manager.ttflist if f.name != "DejaVu Serif"])
    monkeypatch.setattr(font_manager, "findSystemFonts", lambda *a, **k: [path])
    monkeypatch.setattr(pictures, "CJK_FONTS", ("DejaVu Serif",))
    pictures._cjk_fonts.cache_clear()
    try:
        assert pictures._cjk_fonts() == ("DejaVu Serif",)
    finally:
        pictures._cjk_fonts.cache_clear()
