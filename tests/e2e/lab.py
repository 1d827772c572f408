"""Drive a real JupyterLab in headless Chromium (Debian's, via Playwright) the way a student does.

- ``JupyterLab``: a server on 127.0.0.1, a port the OS picks (``--port=0``), a random token, its
  own HOME, runtime, config, settings and workspace folders (nothing of the machine's user leaks in
  or out). Settings: cells are never virtualised (``windowingMode: none``, so every cell is in the
  DOM), execution timing is recorded in cell metadata, no news or update checks (closed network).
- ``NotebookPage``: open a notebook, wait for its kernel, Run ▸ Run All Cells, Run ▸ Run Selected
  Cell and All Below, read what each cell shows, save, take screenshots.

Every wait is on a condition in the page (a DOM state, the kernel status in the status bar), with a
generous timeout; nothing sleeps for synchronisation.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

CHROMIUM = os.environ.get("CH13_CHROMIUM", "/usr/bin/chromium")
# The flags a root process in this closed network needs (see docs/e2e.md).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]

LAB_START_TIMEOUT_S = 180
KERNEL_TIMEOUT_S = 180
RUN_TIMEOUT_S = 600  # one Run All on 2 shared cores (Ray, gloo worlds, the CUDA simulator)

SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none", "recordTiming": True},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false", "checkForUpdates": False},
}

_RUNNING = re.compile(r"(http://127\.0\.0\.1:(\d+)/)\S*")


def missing_tools() -> str:
    """'' when Playwright and Chromium are here, else what is missing."""
    problems = []
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        problems.append("the playwright package (pip install playwright==1.65.2)")
    if not os.access(CHROMIUM, os.X_OK):
        problems.append(f"Debian's chromium at {CHROMIUM} (apt-get install chromium)")
    return " and ".join(problems)


class JupyterLab:
    """A JupyterLab server for one folder. ``with JupyterLab(root, scratch) as lab: lab.url(...)``."""

    def __init__(self, root_dir: str, scratch: str, env: dict | None = None) -> None:
        self.root_dir = os.path.abspath(root_dir)
        self.scratch = os.path.abspath(scratch)
        self.token = secrets.token_hex(16)
        self.base = ""
        self.env = env
        self.proc: subprocess.Popen | None = None
        self.log_path = os.path.join(self.scratch, "jupyterlab.log")
        self._ready = threading.Event()

    def __enter__(self) -> "JupyterLab":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        dirs = {
            name: os.path.join(self.scratch, name)
            for name in ("home", "runtime", "config", "settings", "workspaces", "ipython")
        }
        for d in dirs.values():
            os.makedirs(d, exist_ok=True)
        for rel, value in SETTINGS.items():
            path = os.path.join(dirs["settings"], rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                json.dump(value, f)
        env = dict(self.env if self.env is not None else os.environ)
        env.update(
            HOME=dirs["home"],
            JUPYTER_RUNTIME_DIR=dirs["runtime"],
            JUPYTER_CONFIG_DIR=dirs["config"],
            IPYTHONDIR=dirs["ipython"],
            PYTHONUNBUFFERED="1",
        )
        # `alembic` (nbgrader's gradebook) and `jupyter-*` must come from this venv.
        env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
        cmd = [
            sys.executable,
            "-m",
            "jupyter",
            "lab",
            "--no-browser",
            "--ip=127.0.0.1",
            "--port=0",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root_dir}",
            f"--LabApp.user_settings_dir={dirs['settings']}",
            f"--LabApp.workspaces_dir={dirs['workspaces']}",
            "--ServerApp.open_browser=False",
        ]
        if os.geteuid() == 0:
            cmd.append("--allow-root")
        self.proc = subprocess.Popen(
            cmd,
            cwd=self.root_dir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        threading.Thread(target=self._pump, daemon=True).start()
        deadline = time.monotonic() + LAB_START_TIMEOUT_S
        if not self._ready.wait(LAB_START_TIMEOUT_S) or not self.base:
            self.stop()
            raise RuntimeError(f"JupyterLab did not start within {LAB_START_TIMEOUT_S} s; log:\n{self.log()}")
        # With --port=0 the server logs its URL, then binds the port from its event loop: wait until
        # it answers (or has exited: the port was taken in between, which the log says).
        while True:
            try:
                self.api("GET", "api/status")
                return
            except (urllib.error.URLError, ConnectionError) as e:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"JupyterLab at {self.base} does not answer ({e}); log:\n{self.log()}") from e
                time.sleep(0.2)  # the poll interval, not a synchronisation: the loop ends on a condition

    def _pump(self) -> None:
        with open(self.log_path, "wb") as log:
            for line in self.proc.stdout:
                log.write(line)
                log.flush()
                if not self.base:
                    m = _RUNNING.search(line.decode("utf-8", "replace"))
                    if m and "is running at" not in line.decode("utf-8", "replace"):
                        self.base = m.group(1)
                        self._ready.set()
        self._ready.set()  # the server ended: wake the waiter (base stays "" if it never ran)

    def log(self) -> str:
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as f:
                return f.read()[-6000:]
        except OSError:
            return ""

    def url(self, path: str = "lab") -> str:
        sep = "&" if "?" in path else "?"
        return f"{self.base}{path.lstrip('/')}{sep}token={self.token}"

    def api(self, method: str, path: str):
        req = urllib.request.Request(
            self.base + path.lstrip("/"), method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(req, timeout=60) as resp:
            body = resp.read()
            return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        """Delete every session (and its kernel): Ray and gloo worlds must not outlive their notebook."""
        for session in self.api("GET", "api/sessions") or []:
            self.api("DELETE", f"api/sessions/{session['id']}")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            try:
                self.shutdown_kernels()
            except Exception:
                pass
            os.killpg(self.proc.pid, signal.SIGTERM)  # the server's own group (start_new_session)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=30)


# What the page shows, read in one go: for every cell in order, its kind, prompt and output text.
_CELLS_JS = """() => [...document.querySelectorAll('.jp-NotebookPanel .jp-WindowedPanel-viewport > .jp-Cell')]
  .map(c => ({
    kind: c.classList.contains('jp-CodeCell') ? 'code' : (c.classList.contains('jp-MarkdownCell') ? 'markdown' : 'raw'),
    prompt: c.classList.contains('jp-CodeCell') ? (c.querySelector('.jp-InputArea-prompt')?.innerText || '').trim() : '',
    text: [...c.querySelectorAll('.jp-OutputArea-output')].map(o => o.innerText).join('\\n'),
  }))"""
_STATUS_JS = """() => (document.querySelector('#jp-main-statusbar')?.innerText || '')"""
_IDLE = re.compile(r"^(?!No Kernel).+\| Idle\s*$", re.M)
TRACEBACK = re.compile(r"^(\w+(?:Error|Exception|Interrupt|Exit))\s+Traceback \(most recent call last\)", re.M)


class NotebookPage:
    """One notebook open in JupyterLab in a Playwright page."""

    def __init__(self, page, lab: JupyterLab, rel_path: str) -> None:
        self.page = page
        self.lab = lab
        self.rel_path = rel_path

    def open(self) -> "NotebookPage":
        # A workspace of its own: JupyterLab would otherwise restore the tabs of earlier pages.
        if not os.path.isfile(os.path.join(self.lab.root_dir, self.rel_path)):
            raise FileNotFoundError(f"no notebook {self.rel_path} under {self.lab.root_dir}")
        workspace = "e2e-" + secrets.token_hex(4)
        self.page.goto(
            self.lab.url(f"lab/workspaces/{workspace}/tree/{self.rel_path}"), timeout=LAB_START_TIMEOUT_S * 1000
        )
        self.page.wait_for_selector(
            ".jp-NotebookPanel .jp-WindowedPanel-viewport > .jp-Cell", timeout=LAB_START_TIMEOUT_S * 1000
        )
        panels = self.page.locator(".jp-NotebookPanel").count()
        assert panels == 1, f"{panels} notebooks open in a fresh workspace, expected only {self.rel_path}"
        self.wait_kernel_idle()
        return self

    def status(self) -> str:
        return self.page.evaluate(_STATUS_JS)

    def wait_kernel_idle(self, timeout_s: float = KERNEL_TIMEOUT_S) -> None:
        self.page.wait_for_function(
            """() => /^(?!No Kernel).+\\| Idle\\s*$/m.test(document.querySelector('#jp-main-statusbar')?.innerText || '')""",
            timeout=timeout_s * 1000,
        )

    def cells(self) -> list[dict]:
        return self.page.evaluate(_CELLS_JS)

    def _menu(self, menu: str, command: str) -> None:
        self.page.get_by_role("menuitem", name=menu, exact=True).click()
        self.page.locator(f'.lm-Menu li[data-command="{command}"]').click()

    def _wait_run(self, first_code: int, before: str, timeout_s: float) -> None:
        """Wait until the run that starts at code cell ``first_code`` is over: that cell shows a new
        execution count, no cell shows [*], and the kernel is idle."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        try:
            self._wait_run_js(first_code, before, timeout_s)
        except PlaywrightTimeout:
            prompts = [c["prompt"] for c in self.cells() if c["kind"] == "code"]
            raise AssertionError(
                f"{self.rel_path}: the run from code cell {first_code} (prompt before: {before!r}) "
                f"did not finish within {timeout_s:.0f} s; prompts now {prompts}; status bar: "
                f"{self.status()!r}"
            ) from None

    def _wait_run_js(self, first_code: int, before: str, timeout_s: float) -> None:
        self.page.wait_for_function(
            """([first, before]) => {
                 const prompts = [...document.querySelectorAll('.jp-NotebookPanel .jp-WindowedPanel-viewport > .jp-CodeCell .jp-InputArea-prompt')]
                                 .map(p => p.innerText.trim());
                 const status = document.querySelector('#jp-main-statusbar')?.innerText || '';
                 return /^\\[\\d+\\]:$/.test(prompts[first]) && prompts[first] !== before
                        && !prompts.some(p => p.includes('*')) && /^(?!No Kernel).+\\| Idle\\s*$/m.test(status);
               }""",
            arg=[first_code, before],
            timeout=timeout_s * 1000,
            polling=500,
        )

    def _code_positions(self) -> list[int]:
        return [i for i, c in enumerate(self.cells()) if c["kind"] == "code"]

    def run_all(self, timeout_s: float = RUN_TIMEOUT_S) -> None:
        """Run ▸ Run All Cells, and wait for it to finish (or stop at an error)."""
        before = self.cells()[self._code_positions()[0]]["prompt"]
        self._menu("Run", "runmenu:run-all")
        self._wait_run(0, before, timeout_s)

    def run_from(self, cell_index: int, timeout_s: float = RUN_TIMEOUT_S) -> None:
        """Select cell ``cell_index`` and Run ▸ Run Selected Cell and All Below, as a student goes on
        past a cell that raised."""
        cell = self.page.locator(".jp-NotebookPanel .jp-WindowedPanel-viewport > .jp-Cell").nth(cell_index)
        cell.locator(".jp-InputArea-prompt").click()
        before = self.cells()[cell_index]["prompt"]
        self._menu("Run", "notebook:run-all-below")
        self._wait_run(self._code_positions().index(cell_index), before, timeout_s)

    def run_everything(self, timeout_s: float = RUN_TIMEOUT_S) -> int:
        """Run All, then go on below every cell that stopped the run; returns how many runs it took."""
        self.run_all(timeout_s)
        runs = 1
        while True:
            cells = self.cells()
            unrun = [i for i, c in enumerate(cells) if c["kind"] == "code" and not re.match(r"^\[\d+\]:$", c["prompt"])]
            if not unrun:
                return runs
            self.run_from(unrun[0], timeout_s)
            runs += 1

    def save(self) -> None:
        self.page.keyboard.press("Control+s")
        self.page.wait_for_function(
            """() => !document.querySelector('.lm-TabBar-tab.lm-mod-current.jp-mod-dirty')""", timeout=60_000
        )

    def screenshots(self, folder: str) -> list[str]:
        """The whole window, then every code cell that shows output (scrolled into view one by one)."""
        os.makedirs(folder, exist_ok=True)
        paths = [os.path.join(folder, "window.png")]
        self.page.screenshot(path=paths[0])
        cells = self.page.locator(".jp-NotebookPanel .jp-WindowedPanel-viewport > .jp-Cell")
        for i, c in enumerate(self.cells()):
            if c["kind"] == "code" and c["text"].strip():
                path = os.path.join(folder, f"cell{i:02d}.png")
                cells.nth(i).screenshot(path=path, timeout=60_000)
                paths.append(path)
        return paths


def errors_of(text: str) -> list[str]:
    """Exception names of the tracebacks a cell shows."""
    return TRACEBACK.findall(text)


def fresh_dir(path: str) -> str:
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path
