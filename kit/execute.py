"""nbgrader's Execute, made robust: the student's kernel runs sandboxed, and a kernel that dies,
hangs or swallows interrupts no longer fails the whole notebook.

Scores come from kit/external_grade.py, not from execution; executing still matters because the
student (and the TA) read the outputs in the feedback.
"""
from __future__ import annotations

import os
import sys

from jupyter_client.manager import AsyncKernelManager
from nbformat.v4 import new_output

from nbgrader.preprocessors import Execute

from kit import ROOT
from kit.jobs import kill_job, new_token


class SandboxedKernelManager(AsyncKernelManager):
    """Starts the kernel through kit.sandbox, tagged so that its whole process tree can be killed."""

    def format_kernel_cmd(self, extra_arguments=None):
        cmd = super().format_kernel_cmd(extra_arguments)
        return [sys.executable, "-m", "kit.sandbox", "--workdir", os.getcwd(), "--"] + cmd

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        self.ch13_job = new_token()
        env = dict(kw.get("env") or os.environ)
        env.update(CH13_JOB=self.ch13_job, PYTHONPATH=ROOT, PYTHONHASHSEED="0",
                   RAY_AUTH_MODE="disabled", RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0",
                   RAY_USAGE_STATS_ENABLED="0")
        kw["env"] = env
        return await super()._async_launch_kernel(kernel_cmd, **kw)

    async def _async_shutdown_kernel(self, now=False, restart=False):
        try:
            await super()._async_shutdown_kernel(now=now, restart=restart)
        finally:
            kill_job(getattr(self, "ch13_job", ""))   # the kernel's children too (Ray, ranks, ...)


class SafeExecute(Execute):

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", SandboxedKernelManager)
        super().__init__(*args, **kwargs)

    def preprocess(self, nb, resources, retry=None):
        try:
            return super().preprocess(nb, resources)
        except Exception as e:     # dead kernel, IOPub timeout, ...: keep the outputs so far
            why = (f"execution stopped: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}\n"
                   "The hidden tests still grade your answer cells (outside the notebook).\n")
            self.log.warning("%s", why.strip())
            first = next((c for c in nb.cells if c.cell_type == "code"), None)
            if first is not None:    # where the student sees it first
                first.setdefault("outputs", []).insert(0, new_output("stream", name="stdout", text="[kit] " + why))
            return nb, resources
