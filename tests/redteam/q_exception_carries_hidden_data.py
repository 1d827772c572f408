# redteam: raises an exception whose __str__ looks for the grader's hidden answers and explanations (sys.modules, the caller's frames) so that the feedback HTML carries them out
# kind: cell
# target: quiz
# score: quiz=0
# message: quiz: LeakError
# why: no hidden data is in the subject (the judge holds it); the exception's text is the cell's own words, capped, and nothing of the judge's memory reaches it
import sys


class LeakError(Exception):
    def __str__(self):
        loot = []
        for name, module in list(sys.modules.items()):
            if name.startswith("graders"):
                loot.append(repr(vars(module).get("ANSWERS")) + repr(vars(module).get("EXPLAIN")))
        return "leak: " + " | ".join(loot)


raise LeakError()
