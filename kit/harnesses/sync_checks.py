"""The thread scheduler's grading side (notebook 01): a hidden test's scenario explored on the answer
cell in the grading subject, reported as plain data (graders/_sync.py asks, and judges).

The scenarios, the search and the feedback a student reads are ch13lib.sync_checks' and
ch13lib.sched's, the same the notebook's self-checks run.
"""

from __future__ import annotations

from ch13lib.sync_checks import Scenario, feedback, run

# What the hidden graders may run on an answer cell in the grading subject (kit/subject.py).
SUBJECT_API = ("explore_cell",)


def explore_cell(cell, scenario: Scenario, obj_name: str, **budget) -> dict:
    """The grading subject's side of a hidden test (kit/subject.py runs it beside the answer cell).

    Explores ``scenario`` (a :class:`~ch13lib.sync_checks.Scenario` or its fields) on ``cell``
    (loaded afresh for every schedule) within ``budget`` (explore()'s keywords: schedules and steps,
    never seconds) and reports plain data: ``ok``, how far the search went (``schedules``,
    ``exhaustive``, ``random_schedules``, and ``threads``, the most threads any schedule started),
    and for a failure its ``kind``, ``schedule`` and the feedback the student reads (``message``,
    ``example``; see ch13lib.sync_checks.feedback). The judge decides what that is worth."""
    if isinstance(scenario, dict):
        scenario = Scenario(**scenario)
    rep = run(None, scenario, load=cell.load, filename=cell.filename, **budget)
    out = {
        "ok": rep.ok,
        "schedules": rep.schedules,
        "exhaustive": rep.exhaustive,
        "random_schedules": rep.random_schedules,
        "threads": rep.threads,
    }
    if not rep.ok:
        message, example = feedback(scenario, rep.failure, obj_name)
        out.update(
            kind=str(rep.failure.kind),
            schedule=str(rep.failure.schedule),
            message=str(message),
            example=str(example),
            events=list(rep.failure.events),
            scenario=str(scenario.key),
        )
    return out
