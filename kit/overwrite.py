"""nbgrader's OverwriteCells, with deleted grade cells put back where they belong.

nbgrader 0.9.6 re-inserts a deleted grade cell after the source cell just before it, but only
looks that neighbour up among grade and solution cells: when it is a locked markdown cell (as in
every kit notebook) it raises KeyError and the whole submission fails. Here the nearest earlier
source cell still present in the notebook is used, else the start of the notebook.
"""

from __future__ import annotations

from nbgrader.preprocessors import OverwriteCells


class RobustOverwriteCells(OverwriteCells):
    def add_missing_grade_cells(self, nb, resources):
        source_nb = self.gradebook.find_notebook(self.notebook_id, self.assignment_id)
        source_cells = source_nb.source_cells
        order = [cell.name for cell in source_cells]
        solution_ids = {cell.name for cell in source_nb.solution_cells}
        for grade_cell in source_nb.grade_cells:
            present = [c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells]
            if grade_cell.name in present:
                continue
            self.log.warning("Missing grade cell %s encountered, adding to notebook", grade_cell.name)
            i = order.index(grade_cell.name)
            cell = self.missing_cell_transform(
                source_cells[i], grade_cell.max_score, is_solution=grade_cell.name in solution_ids
            )
            before = [present.index(name) for name in order[:i] if name in present]
            nb.cells.insert(before[-1] + 1 if before else 0, cell)
        return nb, resources

    def add_missing_task_cells(self, nb, resources):
        # DeduplicateIds leaves `nbgrader: {}` on the duplicates it demotes; nbgrader 0.9.6 then
        # raises KeyError('grade_id') here and the whole submission fails.
        for cell in nb.cells:
            if "nbgrader" in cell.metadata and "grade_id" not in cell.metadata["nbgrader"]:
                del cell.metadata["nbgrader"]
        return super().add_missing_task_cells(nb, resources)
