"""The kit's knobs a TA may set, as typed nbgrader (traitlets) config: ``nbgrader_config.py``
sets them like nbgrader's own, e.g. ``c.Sandbox.job_memory_mb = 8192``.

Precedence, highest first: the knob's environment variable, when set (a one-off run, a test:
``CH13_JOB_MEMORY_MB=2048 nbgrader autograde ...``); then ``nbgrader_config.py`` (or nbgrader's
command line, ``--Sandbox.job_memory_mb=8192``); then the default here. docs/ta.md ("Limits and
knobs") lists every knob with who sets it.

A value set in ``nbgrader_config.py`` lives in the nbgrader process. The kit's preprocessors
(kit/external_grade.py, kit/execute.py) build these objects from their own config and hand the
values down explicitly: to the watchdogs they run, and as options of the judge
(``python -m graders --data-mb N``) and of kit.sandbox (``--data-mb N``, ``--no-namespaces``).
No child process reads ``nbgrader_config.py``; one started without those options (a test, a
hand-run ``python -m kit.sandbox``) gets :class:`Sandbox`'s defaults and the environment.
"""

from __future__ import annotations

import os

from traitlets import Bool, Enum, Integer
from traitlets.config import Configurable


class _EnvOverrides(Configurable):
    """A Configurable whose traits tagged ``env="VAR"`` take VAR's value when it is set (non-empty)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        for name, trait in self.traits(config=True).items():
            var = trait.metadata.get("env")
            value = os.environ.get(var, "") if var else ""
            if value:
                setattr(self, name, _parse(trait, value))

    @classmethod
    def env_vars(cls) -> dict[str, str]:
        """trait name -> its environment variable."""
        return {n: t.metadata["env"] for n, t in cls.class_traits(config=True).items() if t.metadata.get("env")}


def _parse(trait, value: str):
    if isinstance(trait, Bool):  # CH13_SANDBOX_NAMESPACES=0 as before: "0"/"false"/"no" is False
        return value.strip().lower() not in ("0", "false", "no", "off")
    return trait.from_string(value)


class Sandbox(_EnvOverrides):
    """The limits and isolation of one grading job: a student's kernel, or one answer cell's judge
    and subject (docs/sandbox.md). Honest submissions stay far below every limit."""

    job_memory_mb = Integer(
        4096,
        help="MiB held by all of one job's processes together (proportional set sizes: a shared page "
        "counts once); past it the watchdog kills the job (kit.jobs.Watchdog, in the nbgrader process). "
        "Measured peak of an honest answer: 0.6 GiB (word_count on Ray).",
    ).tag(config=True, env="CH13_JOB_MEMORY_MB")
    job_processes = Integer(
        512,
        help="Processes of one job at once; past it the watchdog kills the job (a fork bomb). Measured peak: ~15.",
    ).tag(config=True, env="CH13_JOB_PROCESSES")
    proc_data_mb = Integer(
        2048,
        help="RLIMIT_DATA of each sandboxed process, MiB (heap and private maps; kit.sandbox "
        "--data-mb). Measured peak: ~0.8 GiB.",
    ).tag(config=True, env="CH13_PROC_DATA_MB")
    namespaces = Bool(
        True,
        help="Build the sandbox's namespaces where the machine allows (False: the limits-only tier, "
        "kit.sandbox --no-namespaces; for comparison or a machine where they misbehave).",
    ).tag(config=True, env="CH13_SANDBOX_NAMESPACES")

    def sandbox_args(self) -> list[str]:
        """These limits as kit.sandbox options (the kernel's, and each subject's through the judge)."""
        return ["--data-mb", str(self.proc_data_mb)] + ([] if self.namespaces else ["--no-namespaces"])


class Judges(_EnvOverrides):
    """How the nbgrader process starts each answer cell's judge (kit/judges.py)."""

    launch = Enum(
        ["fork", "exec"],
        "fork",
        help="fork: from a warm zygote that imported the graders once; exec: a fresh `python -m "
        "graders` per cell, and so a fresh subject (for comparison; GPU cells always exec). "
        "Scores are the same either way.",
    ).tag(config=True, env="CH13_JUDGE_LAUNCH")


class Feedback(_EnvOverrides):
    """What students read: the feedback of the hidden tests (the judge's messages, the report)."""

    language = Enum(
        ["both", "zh", "en"],
        "both",
        help="The language of the feedback: both (Chinese, then English: the course is taught in Chinese "
        "first), zh or en. The notebooks' self-checks follow CH13_LANG in the student's environment "
        "(ch13lib/lang.py).",
    ).tag(config=True, env="CH13_LANG")
