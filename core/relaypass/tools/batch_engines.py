"""Where ``relaypass batch`` runs its models: a pool of worker processes, or a Ray cluster.

Both engines take the same jobs and settings and run the same function on
each model (:func:`relaypass.tools.batch_record.run_model`), so a model gets
the same record from either; they differ in what they do when a model gives
no record:

* :class:`ProcessEngine` (the default) keeps ``--jobs`` worker processes,
  started fresh (a new interpreter: nothing of the parent's state, the same
  on every platform) and reused from model to model.  A worker that dies (a crash, a
  pass calling ``os._exit``, the kernel's OOM killer) costs only the model it
  was running: it is recorded as ``crashed`` and a new worker takes its place.
  A model still running a grace period after ``--timeout`` (code that never
  returns to Python, where the worker's own timer cannot stop it) has its
  worker killed and is recorded as ``timeout``, naming the pass it was in.
* :class:`RayEngine` (``--engine ray``, the ``ray`` extra) submits one Ray task
  per model, at most ``--jobs`` at a time, to the cluster at ``RAY_ADDRESS``
  or to a local Ray it starts.  Each job carries the model's bytes and the
  settings the pipeline's text, so a node needs relaypass and the pipeline's
  plugins installed, not the files.  A :class:`StageBoard` actor keeps what
  each task is doing, so that the record of a killed or crashed task names
  its pass as the process pool's does, and says when the task began its
  model: as with the process pool, ``--timeout`` counts from then, not from
  the submission (a task may wait for a CPU, and a new Ray worker spends
  seconds importing relaypass before it starts).  A task past the grace
  period is cancelled with its worker killed (``ray.cancel(force=True)``).

Each worker uses ``cores / jobs`` threads for numpy's BLAS and onnxruntime,
so that ``--jobs`` processes share the machine instead of each taking it all.
"""

from __future__ import annotations

import os
import pickle
import queue
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..errors import RelayPassError
from .batch_record import ModelTimeoutError, WorkerCrashError, failure_record, run_model, warm_up

__all__ = ["ENGINES", "BatchEngineError", "ProcessEngine", "RayEngine", "StageBoard",
           "grace_period", "make_engine", "worker_main"]

#: The values of ``--engine``.
ENGINES = ("process", "ray")

#: How often the engines wake up to check deadlines and refresh the progress line (seconds).
TICK = 0.25

#: The thread-pool variables numpy's BLAS libraries read when they load.
_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                     "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")

Record = dict[str, Any]
OnRecord = Callable[[Record], None]


class BatchEngineError(RelayPassError):
    """An engine cannot run (Ray not installed, a worker that cannot start)."""


def grace_period(timeout: float) -> float:
    """How long after ``timeout`` an engine waits for a worker's own timer before killing it."""
    return max(2.0, 0.5 * timeout)


def make_engine(name: str, jobs: int | None) -> Any:
    """The engine ``--engine name`` asks for, with at most ``jobs`` models running at once."""
    if name == "ray":
        return RayEngine(jobs)
    return ProcessEngine(jobs or os.cpu_count() or 1)


def _prepare_worker(settings: Mapping[str, Any]) -> None:
    """Load the ``--load`` files and warm up (once per process: a Ray worker runs many tasks)."""
    from .load import load_pass_file

    for path in settings.get("loads") or ():
        load_pass_file(path)
    if not _warm:
        warm_up(settings)
        _warm.append(True)


_warm: list[bool] = []


def _timeout_error(job: Mapping[str, Any], timeout: float, stage: str) -> ModelTimeoutError:
    where = f" (stopped while running {stage})" if stage else ""
    return ModelTimeoutError(f"{job['name']}: no result after {timeout:g} s (--timeout){where}")


def _with_stage(record: Record, stage: str) -> Record:
    """A killed model's record names the pass it was stopped in, as a raised error's would."""
    kind, _, name = stage.partition(" ")
    if kind == "pass" and record["error"] is not None:
        record["error"]["pass"] = name.partition(" ")[2] or None
    return record


# --- worker processes --------------------------------------------------------------------------
def worker_main() -> None:
    """A worker process: settings, then jobs, from stdin; stage messages and records to stdout.

    The parent starts it as ``python -c 'from relaypass.tools.batch_engines
    import worker_main; worker_main()'`` (so the parent's main module is
    never imported again, unlike multiprocessing's spawn).  Messages are
    pickles: the settings first, then a job at a time (None: stop); back
    ``("ready", None)``, ``("stage", text)`` as the model moves on,
    ``("record", record)``, or ``("failed", message)`` when the worker cannot
    start.  What passes print goes to stderr: stdout is the channel.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    channel = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    source = sys.stdin.buffer

    def send(message: tuple[str, Any]) -> None:
        pickle.dump(message, channel, protocol=pickle.HIGHEST_PROTOCOL)
        channel.flush()

    settings = pickle.load(source)
    try:
        _prepare_worker(settings)
    except Exception as exc:
        send(("failed", f"{type(exc).__name__}: {exc}"))
        return
    send(("ready", None))
    while True:
        try:
            job = pickle.load(source)
        except EOFError:
            return
        if job is None:
            return
        send(("record", run_model(job, settings, stage=lambda text: send(("stage", text)))))


_WORKER_CODE = "from relaypass.tools.batch_engines import worker_main; worker_main()"


class _Worker:
    """One worker process, the model it is running, and a thread reading what it says.

    The thread puts ``(worker, message)`` on the engine's queue, and
    ``(worker, None)`` when the worker's stdout ends (it exited or died).
    """

    def __init__(self, settings: Mapping[str, Any], messages: queue.Queue) -> None:
        env = dict(os.environ)
        threads = int(settings.get("threads") or 0)
        if threads:
            env.update({name: str(threads) for name in _THREAD_VARIABLES})
        # The parent's import path, as multiprocessing gives its children.
        env["PYTHONPATH"] = os.pathsep.join(p for p in [*sys.path, env.get("PYTHONPATH", "")]
                                            if p)
        self.process = subprocess.Popen([sys.executable, "-c", _WORKER_CODE],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self.ready = False
        self.job: Mapping[str, Any] | None = None
        self.started = 0.0
        self.stage = ""
        self.dead = False
        self._send(dict(settings))
        threading.Thread(target=self._read, args=(messages,), daemon=True).start()

    def _read(self, messages: queue.Queue) -> None:
        stream = self.process.stdout
        try:
            while True:
                messages.put((self, pickle.load(stream)))
        except Exception:  # EOFError when it ends; anything else is a torn message: the same
            messages.put((self, None))

    def _send(self, message: Any) -> None:
        try:
            pickle.dump(message, self.process.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            self.process.stdin.flush()
        except OSError:  # it died: its reader says so
            pass

    def assign(self, job: Mapping[str, Any]) -> None:
        self.job, self.started, self.stage = job, time.monotonic(), ""
        self._send(dict(job))

    def stop(self) -> None:
        """Ask the worker to finish, and kill it if it does not."""
        if self.process.poll() is None:
            self._send(None)
            try:
                self.process.wait(1.0)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass

    def how_it_died(self) -> str:
        try:
            code = self.process.wait(1.0)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        if code < 0:
            try:
                return f"killed by signal {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exit status {code}"


class ProcessEngine:
    """Runs each model in one of ``jobs`` worker processes; see the module's docstring."""

    name = "process"

    def __init__(self, jobs: int) -> None:
        self.jobs = max(1, jobs)
        self.concurrency = self.jobs  # how many models ran at once, for the summary

    def run(self, jobs: Iterable[Mapping[str, Any]], settings: Mapping[str, Any],
            on_record: OnRecord, on_tick: Callable[[], None] = lambda: None) -> None:
        """Run every job; ``on_record`` hears each record as its model finishes (in this process)."""
        pending = deque(jobs)
        timeout = settings.get("timeout")
        limit = None if not timeout else timeout + grace_period(timeout)
        messages: queue.Queue = queue.Queue()
        self.concurrency = min(self.jobs, len(pending))
        workers = {_Worker(settings, messages) for _ in range(self.concurrency)}
        try:
            while pending or any(w.job is not None for w in workers):
                for w in workers:
                    if w.ready and w.job is None and pending:
                        w.assign(pending.popleft())
                try:
                    w, message = messages.get(timeout=self._wait_time(workers, limit))
                except queue.Empty:
                    pass
                else:
                    if w in workers:  # not one buried already, whose last words come late
                        self._hear(w, message, settings, on_record)
                for w in [w for w in workers if w.dead or self._late(w, limit)]:
                    self._bury(w, settings, on_record)
                    workers.discard(w)
                    if pending:
                        workers.add(_Worker(settings, messages))
                for w in [w for w in workers if w.ready and w.job is None and not pending]:
                    w.stop()  # nothing left for it
                    workers.discard(w)
                on_tick()
        finally:
            for w in workers:
                w.stop()

    @staticmethod
    def _wait_time(workers: set[_Worker], limit: float | None) -> float:
        if limit is None:
            return TICK
        now = time.monotonic()
        ends = [w.started + limit - now for w in workers if w.job is not None]
        return max(0.0, min([TICK, *ends]))

    @staticmethod
    def _late(w: _Worker, limit: float | None) -> bool:
        return w.job is not None and limit is not None and time.monotonic() - w.started > limit

    @staticmethod
    def _hear(w: _Worker, message: tuple[str, Any] | None, settings: Mapping[str, Any],
              on_record: OnRecord) -> None:
        if message is None:
            w.dead = True
            if w.job is None and not w.ready:
                raise BatchEngineError(f"a batch worker process ended before it was ready "
                                       f"({w.how_it_died()})")
            return
        kind, value = message
        if kind == "ready":
            w.ready = True
        elif kind == "stage":
            w.stage = value
        elif kind == "record":
            w.job = None
            on_record(value)
        elif kind == "failed":
            raise BatchEngineError(f"a batch worker could not start: {value}")

    @staticmethod
    def _bury(w: _Worker, settings: Mapping[str, Any], on_record: OnRecord) -> None:
        """Record the model a dead or late worker was running, and end the worker."""
        job = w.job
        if job is not None and w.dead:
            where = f" while running {w.stage}" if w.stage else ""
            exc: Exception = WorkerCrashError(f"{job['name']}: the worker process died{where} "
                                              f"({w.how_it_died()})")
            status = "crashed"
        elif job is not None:
            w.process.kill()
            exc, status = _timeout_error(job, settings["timeout"], w.stage), "timeout"
        if job is not None:
            on_record(_with_stage(failure_record(job, settings, status, exc,
                                                 time.monotonic() - w.started), w.stage))
            w.job = None
        w.stop()


# --- Ray -----------------------------------------------------------------------------------------
def _ray_task(job: Mapping[str, Any], settings: Mapping[str, Any], board: Any) -> Record:
    """What a Ray worker runs for one model: the same as a worker process, telling ``board``
    (a :class:`StageBoard` actor) each stage, as a worker process tells its parent."""
    ray = _import_ray()
    _prepare_worker(settings)

    def stage(text: str) -> None:
        ray.get(board.set.remote(job["key"], text))  # waited for: a crash right after loses nothing

    return run_model(job, settings, stage=stage)


class StageBoard:
    """A Ray actor holding what each running model is doing ("pass 3 FoldConstant"), so that
    the record of a task that crashed or was killed names the pass, as the process pool's do;
    a model with a stage has begun (its task's time limit runs from then)."""

    def __init__(self) -> None:
        self.stages: dict[str, str] = {}

    def set(self, key: str, text: str) -> None:
        self.stages[key] = text

    def get(self, key: str) -> str:
        return self.stages.get(key, "")

    def begun(self, keys: list[str]) -> list[str]:
        """The models of ``keys`` whose task has begun running them."""
        return [key for key in keys if key in self.stages]


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise BatchEngineError("--engine ray needs Ray, which is not installed: "
                               "pip install 'relaypass[ray]'") from None
    return ray


class RayEngine:
    """Runs each model as a Ray task; see the module's docstring."""

    name = "ray"

    def __init__(self, jobs: int | None) -> None:
        self.jobs = jobs
        self.concurrency = jobs or 0  # known once connected: the cluster's CPUs by default
        self.ray = _import_ray()

    def _connect(self) -> int:
        """Join the cluster at RAY_ADDRESS, or start a local Ray; how many tasks to keep running."""
        ray = self.ray
        if not ray.is_initialized():
            address = os.environ.get("RAY_ADDRESS") or None
            local = {} if address else {"num_cpus": self.jobs or os.cpu_count() or 1}
            ray.init(address=address, include_dashboard=False, log_to_driver=False, **local)
        return self.jobs or max(1, int(ray.cluster_resources().get("CPU", 1)))

    def run(self, jobs: Iterable[Mapping[str, Any]], settings: Mapping[str, Any],
            on_record: OnRecord, on_tick: Callable[[], None] = lambda: None) -> None:
        """Run every job as a Ray task; ``on_record`` hears each record as its model finishes."""
        ray = self.ray
        limit_running = self.concurrency = self._connect()
        task = ray.remote(num_cpus=1, max_retries=0)(_ray_task)
        board = ray.remote(num_cpus=0)(StageBoard).remote()
        settings_ref = ray.put(dict(settings))
        pending = deque(jobs)
        timeout = settings.get("timeout")
        limit = None if not timeout else timeout + grace_period(timeout)
        # ref -> (job, when it was submitted); began: ref -> when its model began (seen so).
        running: dict[Any, tuple[Mapping[str, Any], float]] = {}
        began: dict[Any, float] = {}
        try:
            while pending or running:
                while pending and len(running) < limit_running:
                    job = pending.popleft()
                    ref = task.remote(_with_data(job), settings_ref, board)
                    running[ref] = (job, time.monotonic())
                done, _ = ray.wait(list(running), num_returns=1, timeout=TICK)
                for ref in done:
                    job, submitted = running.pop(ref)
                    on_record(self._result(ref, job, settings, began.pop(ref, submitted), board))
                now = time.monotonic()
                waiting = {running[ref][0]["key"]: ref for ref in running if ref not in began}
                if limit is not None and waiting:
                    for key in ray.get(board.begun.remote(list(waiting))):
                        began[waiting[key]] = now
                for ref, started in list(began.items()):
                    if limit is not None and now - started > limit:
                        job = running.pop(ref)[0]
                        del began[ref]
                        ray.cancel(ref, force=True)
                        stage = ray.get(board.get.remote(job["key"]))
                        record = failure_record(job, settings, "timeout",
                                                _timeout_error(job, timeout, stage), now - started)
                        on_record(_with_stage(record, stage))
                on_tick()
        finally:
            for ref in running:
                ray.cancel(ref, force=True)

    def _result(self, ref: Any, job: Mapping[str, Any], settings: Mapping[str, Any],
                started: float, board: Any) -> Record:
        ray = self.ray
        try:
            return ray.get(ref)
        except ray.exceptions.RayError as exc:  # the worker died, or Ray itself failed
            stage = ray.get(board.get.remote(job["key"]))
            where = f" while running {stage}" if stage else ""
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            crash = WorkerCrashError(f"{job['name']}: the Ray task failed{where} "
                                     f"({type(exc).__name__}: {first})")
            record = failure_record(job, settings, "crashed", crash, time.monotonic() - started)
            return _with_stage(record, stage)


def _with_data(job: Mapping[str, Any]) -> dict[str, Any]:
    """The job with its model file's bytes, for a node that may not see the file."""
    out = dict(job)
    if job.get("path") and not job.get("zoo"):
        try:
            with open(job["path"], "rb") as fh:
                out["data"] = fh.read()
        except OSError:
            pass  # the task reports it, as the process engine does
    return out
