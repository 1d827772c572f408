"""The public self-checks tell the truth before the grade does (kit/selfchecks.py): for every graded
cell, the notebook's own self-check flags at least 90 % of the catalogue's wrong answers and no
right one. The table is in docs/selfchecks.md (`python -m kit.selfchecks --markdown`)."""

from __future__ import annotations

import pytest

from kit.selfchecks import BAR, measure

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def outcomes():
    from kit.classrun import default_jobs

    return measure(jobs=default_jobs())


def grade_ids():
    from graders import grade_ids as ids

    return ids()


@pytest.mark.parametrize("grade_id", grade_ids())
def test_self_check_flags_the_wrong_answers_and_passes_the_right_ones(outcomes, grade_id):
    mine = [o for o in outcomes if o.grade_id == grade_id]
    assert mine, f"no catalogue for {grade_id}"
    assert not [o for o in mine if o.error], [(o.name, o.error) for o in mine if o.error]
    alarms = [o.name for o in mine if o.right and o.flagged]
    assert not alarms, (
        f"{grade_id}: the self-check flags right answers: {[(o.name, o.why) for o in mine if o.name in alarms]}"
    )
    wrong = [o for o in mine if not o.right]
    missed = [o.name for o in wrong if not o.flagged]
    assert len(wrong) - len(missed) >= BAR * len(wrong), (
        f"{grade_id}: the self-check passes {len(missed)} of {len(wrong)} wrong answers: {missed}"
    )
