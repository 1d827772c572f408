"""The TA-facing side of the kit: nbgrader glue, the sandbox, the class runner, the demo."""

import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ASSIGNMENT = "ch13_04"
