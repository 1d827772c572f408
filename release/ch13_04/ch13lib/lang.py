"""The language the kit speaks to students: ``zh``, ``en`` or ``both``.

The course is taught in Chinese first, so ``both`` (the default) says every sentence in Chinese and
then in English. The feedback of a grading follows the TA's choice (``c.Feedback.language`` in
nbgrader_config.py, or ``CH13_LANG``: docs/ta.md); a notebook's self-checks follow the student's
(``CH13_LANG`` in the environment Jupyter starts from, or ``ch13lib.lang.use("en")`` in a cell).

Each module keeps its sentences in one :class:`Messages` table, each sentence in both languages
with the same ``{fields}``: ``M = Messages(done=("{n} 个通过", "{n} passed"))``, then ``M("done", n=3)``.
A phrase that fills a field of another sentence is a :class:`Both`, ``M.both("key")``: each language's
sentence takes that language's phrase.
"""

from __future__ import annotations

import os
import re
import string

LANGUAGES = ("zh", "en", "both")
ENV = "CH13_LANG"
ONE_LINE = 100  # both languages fit one line, "中文 / English", up to this many characters

_chosen: str | None = None


def use(language: str | None) -> None:
    """Speak ``language`` in this process from now on (None: back to ``CH13_LANG`` or ``both``)."""
    global _chosen
    if language is not None and language not in LANGUAGES:
        raise ValueError(f"language must be one of {LANGUAGES}, got {language!r}")
    _chosen = language


def language() -> str:
    """The language in force: :func:`use`'s, else ``CH13_LANG``'s, else ``both``."""
    if _chosen is not None:
        return _chosen
    env = os.environ.get(ENV, "").strip().lower()
    return env if env in LANGUAGES else "both"


def say(zh: str, en: str) -> str:
    """One sentence in the language in force; both: Chinese first, on one line when short."""
    lang = language()
    if lang == "zh":
        return zh
    if lang == "en":
        return en
    if "\n" not in zh + en and len(zh) + len(en) <= ONE_LINE:
        return f"{zh} / {en}"
    return f"{zh}\n{en}"


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


class Both(tuple):
    """A phrase in both languages, (Chinese, English): as a field of a :class:`Messages` sentence, each
    language's sentence takes its own side; anywhere else it reads as :func:`say` says it."""

    __slots__ = ()

    def __new__(cls, zh: str, en: str) -> Both:
        return super().__new__(cls, (zh, en))

    def __getnewargs__(self) -> tuple[str, str]:  # pickle and copy rebuild it from its two sides
        return tuple(self)

    def __str__(self) -> str:
        return say(*self)

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


def _side(fields: dict, i: int) -> dict:
    return {k: v[i] if isinstance(v, Both) else v for k, v in fields.items()}


class Messages:
    """One module's sentences: key -> (Chinese, English), both with the same ``{fields}``."""

    tables: list[Messages] = []  # every table made, for the test that each says it in both languages

    def __init__(self, **texts: tuple[str, str]) -> None:
        for key, pair in texts.items():
            if not (isinstance(pair, tuple) and len(pair) == 2 and all(isinstance(t, str) and t for t in pair)):
                raise ValueError(f"{key}: a message is a (Chinese, English) pair of non-empty strings")
            if _fields(pair[0]) != _fields(pair[1]):
                raise ValueError(f"{key}: the Chinese and English texts have different fields")
        self.texts = texts
        Messages.tables.append(self)

    def __call__(self, key: str, **fields) -> str:
        return say(*self.both(key, **fields))

    def both(self, key: str, **fields) -> Both:
        """The sentence in each language, whatever is in force (a field that is a :class:`Both`
        gives each language its own side)."""
        zh, en = self.texts[key]
        return Both(zh.format(**_side(fields, 0)), en.format(**_side(fields, 1)))


# The self-checks' frame, the same in every notebook: the lines around each check's own ✔ and ✘.
FRAME = Messages(
    skipped=("评分时跳过自检: 由隐藏测试决定。", "self-check skipped while grading: the hidden tests decide."),
    stub=(
        "✘ 尚未实现: 把 `raise NotImplementedError()` 换成你的代码",
        "✘ not implemented yet: replace `raise NotImplementedError()` with your code",
    ),
    stub_named=("✘ {what}: 尚未实现", "✘ {what}: not implemented yet"),
    passed=("全部自检通过 (隐藏测试会尝试更多情况)。", "All self-checks passed (the hidden tests try more cases)."),
    fix=("请修正上面的 ✘ 行 (每行都说明了如何重现)。", "Fix the ✘ lines above (each says how to replay it)."),
    no_picture=("(没有图: {why})", "(no picture: {why})"),
)


_CJK = re.compile(r"[\u4e00-\u9fff]")
AS_ABOVE = Both("(同上)", "(as above)")


class Once:
    """What one listing (a self-check's cases, a report's tests) has said: a long line of prose that
    an earlier message of the listing said becomes a pointer to it, so that cases that fail for one
    reason explain it once and then say only what differs (their names and replay lines). Indented
    lines (a trace, a chart, code) are always said in full; runs of pointers read as one line."""

    LONG = 60  # characters: shorter lines (a case's name, a figure) are said again in full

    def __init__(self) -> None:
        self._said: set[str] = set()

    def __call__(self, text: str) -> str:
        out: list[str] = []
        pointers: list[str] = []  # the pointers of the run that ends the output so far
        lines = text.split("\n")
        for line in lines:
            body = line.strip()
            if len(body) < self.LONG or line != body or body not in self._said:
                out.append(line)
                pointers = []
                continue
            pointer = AS_ABOVE[0] if _CJK.search(body) else AS_ABOVE[1]
            if pointer in pointers:
                continue
            pointers.append(pointer)
            if len(pointers) > 1:
                out[-1] = " / ".join(pointers)
            else:
                out.append(pointer)
        self._said.update(line for line in lines if line == line.strip())
        return "\n".join(out)
