"""One test's verdict, the one shape it has from the judge to every reader.

The judge makes a :class:`Result` for each test (graders/api.py) and writes it, signed, as
``to_json()``; the nbgrader process reads it back with :meth:`Result.read`, which trusts only the
judge's plan for the test's name and points; a :class:`kit.grading.Verdict` holds the results of
one answer cell, and every reader (the report, the verdicts file, the class report, the GPU
runner) reads these fields, never the text.
"""

from __future__ import annotations

import dataclasses

MESSAGE_CAP = 4000  # characters of a message kept (the student's own text included)
EXAMPLE_CAP = 2000


@dataclasses.dataclass(frozen=True)
class Result:
    test: str
    points: float  # points earned
    max_points: float
    passed: bool
    message: str = ""  # why it failed (empty when passed)
    example: str = ""  # the smallest failing input, replayable by the student
    picture: str = ""  # a PNG that shows the failure, base64

    def to_json(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> Result:
        """A result as :meth:`to_json` wrote it (a verdicts file written before a field existed
        reads that field's default)."""
        fields = {f.name: f for f in dataclasses.fields(cls)}
        given = {k: v for k, v in data.items() if k in fields}
        return cls(**given)

    @classmethod
    def read(cls, item: dict, max_points: float, picture: str) -> Result:
        """A result line from the judge, for a planned test worth ``max_points``: passed only when it
        says so exactly, points from the plan, text capped."""
        passed = item.get("passed") is True
        return cls(
            test=str(item["test"]),
            points=max_points if passed else 0.0,
            max_points=max_points,
            passed=passed,
            message=str(item.get("message", ""))[:MESSAGE_CAP],
            example=str(item.get("example", ""))[:EXAMPLE_CAP],
            picture=picture,
        )

    @classmethod
    def missing(cls, test: str, max_points: float, why: str) -> Result:
        """A planned test with no verdict of its own: no points, ``why`` as its message."""
        return cls(test, 0.0, max_points, False, why)
