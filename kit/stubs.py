"""How an answer cell's solution becomes the student's stub in the release (nbgrader's ClearSolutions).

One addition: a cell whose metadata says ``"ch13": {"stub": "in_place"}`` already shows its stub
above the solution region (the quiz's ``q1 = ...`` lines), so the region is removed and replaced by
a one-line pointer, not by ``raise NotImplementedError()``. A student who fills the stub in place
then has a cell that runs, and full marks when right (a raise left below their answers made the
whole cell fail: 0/10 while the self-check showed ✔ ×5).
"""

from nbgrader.preprocessors import ClearSolutions

IN_PLACE_POINTER = "# ↑ 在上面就地填写 / fill in the answers above, in place"


class ClearSolutionsInPlace(ClearSolutions):
    def _replace_solution_region(self, cell, language):
        if cell.metadata.get("ch13", {}).get("stub") != "in_place":
            return super()._replace_solution_region(cell, language)
        saved = dict(self.code_stub)
        self.code_stub = {**saved, language: IN_PLACE_POINTER}
        try:
            return super()._replace_solution_region(cell, language)
        finally:
            self.code_stub = saved
