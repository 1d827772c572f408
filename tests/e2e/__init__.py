"""Browser tests: the student path and the TA side in a real JupyterLab (docs/e2e.md)."""
