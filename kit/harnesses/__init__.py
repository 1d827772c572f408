"""The grading side of ch13lib: harness modules that only the grading subject and the judge use.

A module here keeps the harness interface of kit/harness.py (``SUBJECT_API``, ``RANK_API``,
``CHILD_API``, ``subject_setup``) and is named by a grader (``Grader(harness=...)``), or by the
harness that starts a guarded child (kit/subject.py ``child``) for its ``CHILD_API``; a rank of a
world the subject launches runs a ``RANK_API`` entry of the subject's harness modules, handed over
(kit/subject.py ``Trusted.ranks``). It imports the
public simulators and checks from ch13lib; ch13lib imports nothing from here, and this package is
never released (kit/release.py copies only source/ch13_04). It is part of the kit, so it gets the
kit's trust: its files are trusted harness code by the one provenance rule (kit/audit.py
``classify``), the sandbox binds them read-only (kit.sandbox.KIT_RUNS), a cell cannot import them
(kit/audit.py ``FORBIDDEN_IMPORTS``), and the subject watches its modules as strictly as ch13lib's
(kit/subject.py ``snapshot``).
"""
