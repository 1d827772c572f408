"""The CUDA checks' grading side (notebook 02): the observations of :mod:`ch13lib.cuda_check` run on
the answer cell in the grading subject, and the :class:`~ch13lib.cuda_check.Ask` through which a
hidden grader reaches them.

The graders judge in their own process with ch13lib.cuda_check's ``check_*`` functions, handing
them :func:`remote`; each observation runs here, in the subject, as ``subject_<op>`` (listed in
``SUBJECT_API``), and sends back plain data only.
"""

from __future__ import annotations

from ch13lib._cuda_source import freeze_libraries
from ch13lib.cuda_check import Ask, CheckFailed, observe_as_is, observe_config, observe_kernel, observe_launcher

# What a hidden grader may run on an answer cell in the grading subject (kit/subject.py).
SUBJECT_API = ("subject_config", "subject_launcher", "subject_kernel", "subject_as_is")


def remote(run, admit=None) -> Ask:
    """Observe the answer cell where it runs: ``run(harness, **case)`` is the grader's ``answer.run``,
    which runs ``subject_<op>`` of this module (``SUBJECT_API``) in the grading subject and returns
    its plain data; ``admit`` judges each observation first (:class:`~ch13lib.cuda_check.Ask`)."""
    return Ask(lambda op, **case: run(f"{__name__}:subject_{op}", **case), admit)


# ``cell.module`` holds the student's functions; plain data goes back to the grader, which judges.


def _sent(observe, cell, case) -> dict:
    """An observation, or a fault the checking simulator found, as plain data: its message, its
    access record (the judge draws the picture) and the kernels run up to it."""
    try:
        if observe in (observe_launcher, observe_kernel):
            case = {**case, "source": (cell.source, cell.filename)}
        return observe(cell.module, **case)
    except CheckFailed as e:
        accesses = getattr(e, "accesses", None)
        kernels = getattr(e, "kernels", None)
        if not accesses and kernels is None:
            raise
        return {"fault": {"message": str(e), "accesses": accesses or None, "kernels": kernels}}


def subject_config(cell, **case) -> dict:
    return _sent(observe_config, cell, case)


def subject_launcher(cell, **case) -> dict:
    return _sent(observe_launcher, cell, case)


def subject_kernel(cell, **case) -> dict:
    return _sent(observe_kernel, cell, case)


def subject_as_is(cell, **case) -> dict:
    return _sent(observe_as_is, cell, case)


def subject_setup(trusted) -> None:
    """Called by the grading subject after it imported the harness, before any student code runs:
    the libraries as kernels read them are taken now (ch13lib._cuda_source.freeze_libraries). The
    simulator starts no process, so it keeps nothing of what the subject hands over (``trusted``)."""
    del trusted
    freeze_libraries()
