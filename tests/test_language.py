"""Every sentence the kit says to a student exists in Chinese and English (ch13lib/lang.py): the
report's frame, the judge's own verdict lines and the self-checks' frame, in the language a TA or
student chose."""

from __future__ import annotations

import importlib
import os
import re

import pytest

import kit

kit.source_ch13lib()

from ch13lib import lang  # noqa: E402

HAN = re.compile(r"[\u4e00-\u9fff]")


def _modules(package: str, folder: str) -> list[str]:
    return [
        f"{package}.{name[:-3]}"
        for name in sorted(os.listdir(folder))
        if name.endswith(".py") and not name.startswith("__")
    ]


# Every module of the kit, the graders and ch13lib: each table any of them makes is checked.
MODULES = (
    _modules("kit", os.path.join(kit.ROOT, "kit"))
    + _modules("graders", os.path.join(kit.ROOT, "graders"))
    + _modules("ch13lib", os.path.dirname(lang.__file__))
)


@pytest.fixture(autouse=True)
def _both_afterwards():
    yield
    lang.use(None)


def test_every_table_says_each_sentence_in_both_languages():
    for name in MODULES:
        importlib.import_module(name)
    for words in kit.Words.made:  # the tables made at first use (kit/jobs.py, kit/judge.py, kit/execute.py)
        words.table()
    assert len(lang.Messages.tables) >= 3
    for table in lang.Messages.tables:
        for key, (zh, en) in table.texts.items():
            assert HAN.search(zh), f"{key}: no Chinese in {zh!r}"
            assert not HAN.search(en) and re.search(r"[A-Za-z]{2}", en), f"{key}: {en!r} is not English"


def test_a_table_refuses_a_pair_whose_fields_differ():
    with pytest.raises(ValueError, match="different fields"):
        lang.Messages(bad=("{n} 个", "{count} of them"))
    with pytest.raises(ValueError, match="pair"):
        lang.Messages(bad=("只有中文",))


@pytest.mark.parametrize("choice", ["zh", "en", "both"])
def test_the_report_speaks_the_chosen_language(choice):
    from kit.grading import Verdict
    from kit.result import Result

    lang.use(choice)
    results = [Result("t1", 0.0, 2.0, False, "m", "n=1"), Result("t2", 0.0, 1.0, False, "m")]
    text = Verdict("vec_add", results, flags=["x"]).report()
    assert text.startswith("vec_add: 0 / 3 ")
    has_zh, has_en = "最小的失败输入" in text and "原因同上" in text, "smallest failing input" in text
    assert (has_zh, has_en) == {"zh": (True, False), "en": (False, True), "both": (True, True)}[choice], text


def test_the_language_comes_from_the_environment_unless_chosen(monkeypatch):
    monkeypatch.setenv(lang.ENV, "en")
    assert lang.language() == "en" and lang.FRAME("fix").startswith("Fix")
    monkeypatch.setenv(lang.ENV, "klingon")
    assert lang.language() == "both"
    lang.use("zh")
    assert lang.FRAME("fix").startswith("请修正")
    with pytest.raises(ValueError):
        lang.use("fr")


def test_the_tas_knob_reaches_the_judge(monkeypatch):
    from kit.config import Feedback

    monkeypatch.setenv("CH13_LANG", "zh")
    assert Feedback().language == "zh"
    monkeypatch.delenv("CH13_LANG")
    assert Feedback().language == "both"


def test_a_reason_said_again_points_to_the_first():
    once = lang.Once()
    rule = "A cuda.syncthreads() must stand between one thread's write of a shared cell and another's read."
    rule_zh = "一个线程写共享内存单元与另一个线程读同一单元之间, 必须隔着一个 cuda.syncthreads(), 否则就是数据竞争。"
    first = once(f"{rule_zh}\n{rule}\nReplay it: check_dot(here(), 64, 64)")
    again = once(f"{rule_zh}\n{rule}\nReplay it: check_dot(here(), 5, 8)")
    assert first.count("syncthreads") == 2  # said in full the first time
    # then one pointer line in the languages it was said in, and what differs (the short replay line)
    assert again.splitlines() == ["(同上) / (as above)", "Replay it: check_dot(here(), 5, 8)"]
    assert lang.Once()("short line\nshort line") == "short line\nshort line"  # a short line is said again
    # a trace's lines (indented) and a line one message says twice are said in full
    trace = "  T1  line 15  self._counts.update(n=1)        read self._counts = Counter({'n': 1})"
    once = lang.Once()
    assert once(f"{rule}\n{trace}\n{trace}") == f"{rule}\n{trace}\n{trace}"
    assert once(f"{rule}\n{trace}") == f"(as above)\n{trace}"
    assert lang.Once()(f"{rule}\n{rule}") == f"{rule}\n{rule}"


def _says(text: str, choice: str, english: str) -> None:
    """``text`` is the sentence ``english`` said in ``choice``: both holds it and Chinese, zh Chinese alone."""
    has_zh, has_en = bool(HAN.search(text)), english in text
    assert (has_zh, has_en) == {"zh": (True, False), "en": (False, True), "both": (True, True)}[choice], text


@pytest.mark.parametrize("choice", ["zh", "both"])
def test_the_watchdogs_reason_is_said_in_the_chosen_language(choice):
    from kit.jobs import Watchdog, new_token

    lang.use(choice)
    dog = Watchdog(new_token(), limit_mb=1, max_processes=3)
    assert dog._too_many([1, 2, 3, 4])
    _says(dog.problem, choice, "your code started more than 3 processes at once (a fork bomb?) and was stopped")
    assert isinstance(dog.problem, str) and dog.stop() == dog.problem  # read as a string where it is read
    assert dog.why == lang.Both(dog.why[0], dog.why[1]) and "3" in dog.why[0]


@pytest.mark.parametrize("choice", ["zh", "both"])
def test_why_the_judge_ended_early_is_said_in_the_chosen_language(choice, tmp_path):
    from kit.grading import _death, _read, plan

    lang.use(choice)
    _says(str(_death(-11, b"")), choice, "the grading process was killed by signal 11 (a crash in native code")
    _says(str(_death(1, b"x\nboom")), choice, "the grading process exited with status 1: x | boom")
    planned = plan("quiz")["tests"]
    results = tmp_path / "results.jsonl"
    results.write_text("not a sealed line\n")
    verdict = _read("quiz", planned, str(results), _death(-9, b""), b"key")
    _says(verdict.problem, choice, "killed by signal 9 (a crash in native code, or a resource limit); 1 result line(s)")
    why = verdict.results[0].message
    # each language's "no verdict" takes its own side of the reason, never "no verdict: 中文 / English"
    _says(why, choice, "no verdict: the grading process was killed by signal 9")
    assert all(not (HAN.search(line) and "verdict" in line) for line in why.splitlines()), why
    assert "!! " + verdict.problem.splitlines()[-1] in verdict.report()
    ran = _read("quiz", planned, str(tmp_path / "absent.jsonl"), "", b"key")
    _says(ran.results[0].message, choice, "no verdict: the grading process ended before every test had run")


@pytest.mark.parametrize("choice", ["zh", "both"])
def test_a_lost_request_is_said_in_the_chosen_language(choice):
    from kit.judge import Lost, Subject, W

    lang.use(choice)
    s = Subject("quiz", "x = 1\n", harness=[], budget_s=10.0, sandbox=False)
    try:
        _says(str(Lost(s._hang_text())), choice, "grading stopped: your code never finished within the cell's time")
        _says(str(Lost(s._died_text(-11))), choice, "the process running your code was killed by signal 11")
        first = W.both("before_tests", why=s._hang_text())
        _says(str(Lost(first)), choice, "never finished within the cell's time (an infinite loop")
        _says(str(Lost(first)), choice, "(while your cell itself ran, before any test)")
        assert all(not (HAN.search(line) and "while your cell" in line) for line in str(first).splitlines())
    finally:
        s.close()


@pytest.mark.parametrize("choice", ["zh", "both"])
def test_the_notebooks_kit_notes_are_said_in_the_chosen_language(choice):
    from kit.execute import W

    lang.use(choice)
    stopped = W.both("kernel_stopped", what=W.both("notebook_past", s="20"))
    note = W("stopped_because", error="DeadKernelError: Kernel died", why=stopped)
    _says(
        note, choice, "[kit] execution stopped: DeadKernelError: Kernel died\n(the notebook ran past 20 s: its kernel"
    )
    assert "DeadKernelError: Kernel died" in note  # the error's own text, as it is
    _says(W("cut", n=1000), choice, "[kit] output of this cell cut at 1000 bytes")


def test_a_phrase_in_both_languages_survives_pickle_and_copy():
    """A Both travels inside exceptions (kit.judge.Lost) and results: pickle and copy rebuild it whole."""
    import copy
    import pickle

    from ch13lib.lang import Both

    phrase = Both("评分进程提前结束", "the grading process ended early")
    for again in (pickle.loads(pickle.dumps(phrase)), copy.deepcopy(phrase)):
        assert type(again) is Both and tuple(again) == tuple(phrase)
