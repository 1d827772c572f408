"""The public self-checks tell the truth before the grade does (kit/selfchecks.py): for every graded
cell, the notebook's own self-check flags at least 90 % of the catalogue's wrong answers and no
right one (`make test-deep`; `make test` measures the sample the catalogue's own test grades). The
table is in docs/selfchecks.md (`python -m kit.selfchecks --markdown`)."""

from __future__ import annotations

import pytest

from kit import selfchecks
from kit.selfchecks import BAR, measure

pytestmark = pytest.mark.slow


def _sample(entries) -> list:
    """Measured by `make test`: each grade_id's reference (its first right answer where it has no
    `right_reference`) and each failure class's `# sample:` answer, as the catalogue's own test
    grades them; `make test-deep` measures every entry."""
    references = {}
    for e in entries:
        if e.right and (e.grade_id not in references or e.name == "right_reference"):
            references[e.grade_id] = e
    return list(references.values()) + [e for e in entries if e.sample is not None]


@pytest.fixture(scope="module")
def outcomes():
    from kit.classrun import default_jobs

    return measure(jobs=default_jobs())


@pytest.fixture(scope="module")
def sampled_outcomes():
    from graders._catalogue import entries
    from kit.classrun import default_jobs

    return measure(jobs=default_jobs(), entries=_sample(entries()))


def test_the_self_checks_pass_every_reference_and_flag_the_sampled_wrong_answers(sampled_outcomes):
    assert not [o for o in sampled_outcomes if o.error], [(o.name, o.error) for o in sampled_outcomes if o.error]
    references = [o for o in sampled_outcomes if o.right]
    assert sorted(o.grade_id for o in references) == sorted(grade_ids())
    assert not [o for o in references if o.flagged], [(o.grade_id, o.why) for o in references if o.flagged]
    wrong = [o for o in sampled_outcomes if not o.right]
    missed = [f"{o.grade_id}/{o.name}" for o in wrong if not o.flagged]
    assert wrong and len(wrong) - len(missed) >= BAR * len(wrong), f"passed {len(missed)} of {len(wrong)}: {missed}"


def grade_ids():
    from graders import grade_ids as ids

    return ids()


@pytest.mark.deep
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


def test_a_forked_entry_has_the_outcome_of_a_fresh_process(monkeypatch):
    """measure() forks entries from a warm interpreter (kit.selfchecks.ZYGOTE): whatever an entry
    does, the outcome is the one ``python -c RUNNER`` gives, an uncaught error's traceback and a
    timeout included."""
    import dataclasses

    from graders import _catalogue as catalogue

    monkeypatch.setattr(selfchecks, "TIMEOUT_S", 3)
    base = catalogue.entries("quiz")[0]
    answers = [
        base.source,
        "def broken(:\n    pass\n",  # RUNNER's ast.parse raises: the error is the traceback
        "import sys\nsys.exit(3)\n",
        "import os\nos._exit(0)\n",  # no output at all
        "import sys\nprint('x' * 200_000, file=sys.stderr)\nimport os\nos._exit(1)\n",
        "import time\ntime.sleep(30)\n",  # past the timeout
    ]
    zygote = selfchecks.Zygote(selfchecks.notebook_of("quiz"))
    try:
        assert zygote.ok
        for answer in answers:
            entry = dataclasses.replace(base, source=answer)
            assert selfchecks.run_entry(entry, zygote) == selfchecks.run_entry(entry), answer
    finally:
        zygote.close()
