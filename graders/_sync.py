"""What notebook 01's four thread graders share: a hidden test explores scenarios in the subject."""

from ch13lib import sync_checks as sc
from graders.api import Answer, Fail


def explore(answer: Answer, scenarios, obj_name: str, budget: dict) -> dict | None:
    """Explore each scenario in the subject (sync_checks.explore_cell, plain data back); the first
    failing schedule, found and told beside the cell, fails the test. The last report, if any."""
    rep = None
    for s in scenarios:
        rep = answer.run(sc.explore_cell, s, obj_name, **budget)
        if not rep["ok"]:
            raise Fail(rep["message"], rep["example"], sc.picture(rep))
    return rep
