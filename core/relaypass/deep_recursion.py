"""Running a deep recursion on a thread whose stack and recursion limit fit it.

TVM's Python visitors recurse: ``visit`` calls ``visit_call``, which calls
``visit`` on each argument, so a chain of 100,000 operators is 100,000 nested
visits, several Python frames each.  The functors keep exactly that order of
calls (ported passes depend on it) and move the recursion, once it gets deep,
onto a worker thread made with a large stack, while the recursion limit is
raised for as long as a worker runs.  The calling thread waits; the worker
runs in a copy of the caller's ``contextvars`` context, so what the caller set
there (the current PassContext, for one) holds on the worker too.

Only the functors use this; nothing here knows about expressions.
"""

from __future__ import annotations

import contextvars
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

#: Stack size of a worker thread.  Python 3.11 keeps most Python frames off the C
#: stack; older and other interpreters need room for each one.
WORKER_STACK_BYTES = 1 << 30
#: The recursion limit while a worker runs (frames of the whole process).
WORKER_RECURSION_LIMIT = 2_000_000

_lock = threading.Lock()
_running = 0
_saved_limit = 0


class ThreadState(threading.local):
    """Per thread: is it a worker (recursion may go as deep as the program), and how
    many recursive calls a user of this module has open on it (kept by that user)."""

    def __init__(self) -> None:
        self.worker = False
        self.level = 0


state = ThreadState()


def run_deep(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` on a worker thread with a large stack; its result, or its exception."""
    global _running, _saved_limit
    outcome: list[Any] = []
    context = contextvars.copy_context()

    def work() -> None:
        state.worker = True
        try:
            outcome.append((True, context.run(fn, *args)))
        except BaseException as exc:  # handed to the caller, which re-raises it
            outcome.append((False, exc))

    worker = threading.Thread(target=work, name="relaypass-deep-recursion", daemon=True)
    with _lock:
        if _running == 0:
            _saved_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_saved_limit, WORKER_RECURSION_LIMIT))
        _running += 1
    try:
        with _lock:
            # The size applies to threads started while it is set: this one.
            old_size = threading.stack_size(WORKER_STACK_BYTES)
            try:
                worker.start()
            finally:
                threading.stack_size(old_size)
        worker.join()
    finally:
        with _lock:
            _running -= 1
            if _running == 0:
                sys.setrecursionlimit(_saved_limit)
    ok, value = outcome[0]
    if ok:
        return value
    raise value
