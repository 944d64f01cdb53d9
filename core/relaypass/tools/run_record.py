"""``relaypass run ... --report FILE.json``: one run written as one record of ``relaypass batch``.

CI compares two runs of a pipeline on a model (before and after changing a
pass) with ``relaypass compare-reports A B``, and a corpus with the report of
``relaypass batch``; a run's record is therefore a batch record, made with
batch's own pieces (:mod:`relaypass.tools.batch_record`): the model's key,
the pipeline with its schedule, the import time, every step's time and node
and operator counts before and after, the checks, the error and the status.

The run fills the :class:`~relaypass.tools.run_report.Report` that
``--json`` prints; the record is made from that document when the command
ends (after an error too: the steps that ran, and the error, are recorded).
It is written as one JSON line, so the file is also a one-model batch
report (``cat a.json b.json > corpus.jsonl`` makes a report of two).

The record's check times count from the end of the pipeline to the end of
the last check (evaluating the result, the reference, comparing); its
``check`` says what the run checked against: ``onnxruntime``, ``stored``
(a model-zoo model's stored output), ``interp`` (the module as read, with
the interpreter; ``run --check``), several joined by ``+``, or ``none``.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any, TextIO

from .batch_record import base_record, model_job, pipeline_description, record_status
from .run_report import Report

__all__ = ["finish", "run_record"]

#: The exit status when the record cannot be written (an input error, as docs/cli.md says).
EXIT_NOT_WRITTEN = 2


def _check_kind(against: str) -> str:
    if against == "onnxruntime":
        return "onnxruntime"
    if against.startswith("the stored reference"):
        return "stored"
    return "interp"


def run_record(report: Report, exit_code: int) -> dict[str, Any]:
    """The batch record of the run ``report`` followed (its document for exit status ``exit_code``)."""
    doc = report.document(exit_code)
    model = doc.get("model") or {}
    path, zoo = model.get("path"), model.get("zoo")
    job = (model_job(path, zoo, model.get("format") or "relay") if path or zoo else
           {"key": None, "name": None, "path": None, "zoo": None, "format": None})
    kinds = list(dict.fromkeys(_check_kind(c.get("against", "")) for c in doc.get("checks") or ()))
    pipeline = doc.get("pipeline")
    settings = {"pipeline_json": None if pipeline is None else
                pipeline_description(pipeline, report.schedule),
                "check": "+".join(kinds) or "none"}
    record = base_record(job, settings)
    output = doc.get("output")
    record.update(input=doc.get("input"), passes=doc.get("passes") or [],
                  checks=doc.get("checks") or [], error=doc.get("error"),
                  output=None if output is None else {k: v for k, v in output.items()
                                                      if k != "path"})
    ended = report.ended
    check = (ended["check"] - ended["passes"]
             if "check" in ended and "passes" in ended and ended["check"] >= ended["passes"]
             else None)
    record["seconds"] = {"import": report.import_seconds, "passes": doc.get("seconds"),
                         "check": check, "total": time.perf_counter() - report.started}
    record["status"] = record_status(record)
    return record


def finish(report: Report, exit_code: int, stream: TextIO) -> int:
    """Write what the command asked for: the record (``--report``), then the document on
    ``stream`` (``--json``).  The exit status: ``exit_code``, or 2 when the record could not
    be written (one error line says why)."""
    if report.record_file is not None:
        line = json.dumps(run_record(report, exit_code), allow_nan=False)
        try:
            with open(report.record_file, "w", encoding="utf-8") as fh:
                fh.write(line + "\n")
        except OSError as exc:
            sys.stderr.write(f"relaypass: error: cannot write the report {report.record_file}: "
                             f"{exc.strerror or exc}\n")
            exit_code = max(exit_code, EXIT_NOT_WRITTEN)
    if report.stdout:
        report.write(exit_code, stream)
    return exit_code
