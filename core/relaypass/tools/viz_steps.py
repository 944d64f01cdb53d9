"""``relaypass run ... --viz-dir DIR``: a picture of the model after every pass of the run, in DIR.

Reading what a pipeline did to a model is easier on its dataflow graph than
on its text: which operators a pass fused, folded or removed.  This
instrument draws ``@main`` with ``relaypass viz``'s renderer
(:mod:`relaypass.tools.viz`) once before the pipeline and once after each
step of its schedule, as the step finishes:

- ``000_input.svg``: the module the pipeline was given;
- ``001_InferType.svg``, ``002_SimplifyInference.svg``, ...: the module after
  each step, numbered by the step's index in the schedule (the numbers of
  ``relaypass explain`` and ``run --json``), so ``ls`` lists them in order.

A step is what the schedule lists: the passes a step runs itself (a
function pass's typing) are part of its picture, not pictures of their
own.  ``--viz-format`` picks ``svg`` (the default), ``html`` (clusters
collapsed, openable) or ``dot`` (needs neither the graphviz package nor the
``dot`` program).  Pictures left in DIR by an earlier run (files named like
these) are removed before the first is written.

Only DIR is written to: a file name is the number and the pass name made
safe (letters, digits, ``._-``), and a file is opened without following a
symbolic link, so a link planted in DIR cannot send a picture elsewhere.
Drawing happens outside the run's instruments (the types for the labels
come from the typing pass in a PassContext of its own), so the other
instruments and the pass timings never see it.
"""

from __future__ import annotations

import os
import re
from typing import Any

from ..transform.context import PassContext
from .schedule import ScheduledPass, ScheduleTracker
from .viz import FORMATS, VizError, render_html, render_svg, require_graphviz, to_dot, typed_module
from .viz_graph import build_graph

__all__ = ["VizSteps", "picture_name"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_MAX_NAME = 80
#: What a picture of an earlier run looks like (removed before the first of this run is written).
_PICTURE = re.compile(r"^\d{3,}_[A-Za-z0-9._-]*\.(dot|svg|html)$")


def picture_name(number: int, pass_name: str, fmt: str) -> str:
    """The file name of the ``number``-th picture: ``003_FoldConstant.svg``, safe everywhere."""
    safe = _UNSAFE.sub("_", pass_name).strip("._")[:_MAX_NAME] or "pass"
    return f"{number:03d}_{safe}.{fmt}"


class VizSteps(ScheduleTracker):
    """Draws the module before the pipeline and after each step of ``schedule`` into ``folder``.

    ``title`` starts each picture's title (the model's name); ``function``
    is the global function drawn.  A format that needs Graphviz, or a
    ``folder`` that is a file, is a :class:`~relaypass.tools.viz.VizError`
    here, before the run starts.
    """

    def __init__(self, folder: str, fmt: str, schedule: list[ScheduledPass], title: str = "",
                 function: str = "main") -> None:
        super().__init__(schedule)
        if fmt not in FORMATS:
            raise VizError(f"--viz-format {fmt}: expected one of {', '.join(FORMATS)}")
        if fmt != "dot":
            require_graphviz()
        if os.path.exists(folder) and not os.path.isdir(folder):
            raise VizError(f"--viz-dir {folder}: a file, not a folder")
        self.folder = folder
        self.fmt = fmt
        self.title = title
        self.function = function
        #: The files written, in order.
        self.written: list[str] = []
        self._started = False
        self._drew_input = False

    def enter_pass_ctx(self) -> None:
        super().enter_pass_ctx()
        self._drew_input = False

    def run_before_pass(self, mod: Any, info: Any) -> None:
        if not self._drew_input:  # the outer pass: the module as the pipeline gets it
            self._drew_input = True
            self._draw(0, "input", mod, "as given")
        super().run_before_pass(mod, info)

    def run_after_pass(self, mod: Any, info: Any) -> None:
        run = self.running()
        super().run_after_pass(mod, info)
        if run is not None and run.after is not None and self.running() is not run:
            step = run.step
            self._draw(step.index, step.name, run.after, f"after {step.index} {step.name}")

    def _draw(self, number: int, name: str, mod: Any, when: str) -> None:
        with PassContext():  # the labels' types, out of the run's instruments' sight
            typed = typed_module(mod)
        if self.function not in typed:
            raise VizError(f"--viz-dir: the module {when} has no @{self.function} to draw")
        graph = build_graph(typed, self.function)
        title = f"{self.title} @{self.function} {when}".strip()
        if self.fmt == "dot":
            text = to_dot(graph, title)
        elif self.fmt == "svg":
            text = render_svg(to_dot(graph, title))[0]
        else:
            text = render_html(graph, title)
        self._write(picture_name(number, name, self.fmt), text)

    def _write(self, file_name: str, text: str) -> None:
        if not self._started:
            os.makedirs(self.folder, exist_ok=True)
            for entry in os.listdir(self.folder):
                old = os.path.join(self.folder, entry)
                if _PICTURE.match(entry) and (os.path.islink(old) or os.path.isfile(old)):
                    os.remove(old)
            self._started = True
        path = os.path.join(self.folder, file_name)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(path, flags, 0o666)
        except OSError as exc:
            raise VizError(f"--viz-dir: cannot write {path}: {exc.strerror or exc}") from None
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        self.written.append(path)
