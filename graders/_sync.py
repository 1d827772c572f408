"""What notebook 01's four thread graders share: a hidden test explores scenarios in the subject."""

import dataclasses

from ch13lib import sync_checks as sc
from ch13lib.lang import Messages
from graders.api import Answer, Fail
from kit.harnesses import sync_checks as harness


def explore(answer: Answer, scenarios, obj_name: str, budget: dict, says: Messages | None = None) -> dict | None:
    """Explore each scenario in the subject (kit.harnesses.sync_checks.explore_cell, plain data back); the first
    failing schedule, found and told beside the cell, fails the test. The last report, if any.
    ``says``: the grader's table of its scenarios' messages in each language (sync_checks.said)."""
    rep = None
    for s in scenarios:
        if says is not None:
            s = dataclasses.replace(s, says=tuple(s.says) + sc.pairs(says))
        rep = answer.run(harness.explore_cell, s, obj_name, **budget)
        if not rep["ok"]:
            raise Fail(rep["message"], rep["example"], sc.picture(rep))
    return rep
