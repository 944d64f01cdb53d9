"""Fuzzing pipeline files: whatever a file holds, loading it is valid or a PipelineError.

Each example writes a mutated pipeline file into a fresh folder, loads it
for an output folder ``out`` (the working directory being another folder,
``cwd``), and when it loads, builds and runs it on a small module.  Allowed
outcomes: it works, or it raises an error of relaypass's own
(:class:`~relaypass.errors.RelayPassError`; for a file that is not valid, a
PipelineError naming the file).  Never another exception, never a hang,
never a file written, changed or deleted outside ``out``: ``cwd``, the
folders above and a folder ``outside`` (holding an earlier run's dump, and
reached from ``out`` by a symbolic link) are compared before and after.
"""

from __future__ import annotations

import os
import tempfile

from fake_plugins import one_error_line, relaypass_cli
from fuzz_kit import examples, mutated_bytes, mutated_document, no_hang, snapshot
from hypothesis import given, settings
from hypothesis import strategies as st

from relaypass import relay
from relaypass.errors import RelayPassError
from relaypass.ir import IRModule
from relaypass.transform.pipeline import PipelineError, read_pipeline

SEEDS = [
    '''name = "fuzz"
opt_level = 3
required_pass = ["FoldConstant"]
disabled_pass = ["FuseOps"]
passes = ["InferType", { name = "FoldConstant" },
          { name = "inner", opt_level = 1, required = ["InferType"], passes = ["DeadCodeElimination"] }]

[config]
"relay.FuseOps.max_depth" = 3

[[instruments]]
name = "DumpIR"
options = { dir = "dumps", clean = true, passes = [] }

[[instruments]]
name = "PrintAfterAll"
options = { file = "after.txt" }
''',
    '''overrides = ["relaypass_std:FoldConstant"]
passes = ["relaypass_std:InferType", "FoldConstant"]

[[instruments]]
name = "PassTimingInstrument"
options = { print_on_exit = true, file = "timing.txt" }

[[instruments]]
name = "PrintChanged"
options = { file = "stderr", context = 1 }
''',
    '''name = "deep"
[[passes]]
name = "a"
[[passes.passes]]
name = "b"
passes = ["InferType", { name = "DeadCodeElimination" }]
[config.relay.FuseOps]
max_depth = 2
''',
]


def _module() -> IRModule:
    x = relay.var("x", shape=(2,))
    return IRModule.from_expr(relay.multiply(relay.add(x, relay.const(1.0)), relay.const(2.0)))


def _check(content: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cwd, out, outside = (os.path.join(tmp, d) for d in ("cwd", "out", "outside"))
        for folder in (cwd, out, outside):
            os.mkdir(folder)
        with open(os.path.join(outside, "000_input.relay"), "w") as fh:
            fh.write("an earlier run")
        os.symlink(outside, os.path.join(out, "link"))
        path = os.path.join(tmp, "pipeline.toml")
        with open(path, "wb") as fh:
            fh.write(content)
        before = {k: v for k, v in snapshot(tmp).items() if not k.startswith("out" + os.sep)}
        old = os.getcwd()
        os.chdir(cwd)
        try:
            with no_hang():
                try:
                    spec = read_pipeline(path, out_dir=out)
                except PipelineError as exc:
                    assert exc.source == path and str(exc).startswith(path)
                    assert "\n" not in exc.key_path
                    return
                try:
                    spec.build()(_module())
                except RelayPassError:
                    pass
        finally:
            os.chdir(old)
            after = {k: v for k, v in snapshot(tmp).items() if not k.startswith("out" + os.sep)}
            assert after == before, "a pipeline file changed files outside its output folder"


@settings(max_examples=examples(150))
@given(content=mutated_bytes(SEEDS))
def test_mutated_pipeline_bytes(content):
    _check(content)


@settings(max_examples=examples(150))
@given(text=mutated_document(SEEDS))
def test_mutated_pipeline_documents(text):
    _check(text.encode("utf-8"))


@settings(max_examples=examples(4))
@given(content=st.binary(min_size=1, max_size=300))
def test_the_cli_reads_random_bytes_as_a_pipeline_file_in_one_line(content):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "random.toml")
        with open(path, "wb") as fh:
            fh.write(content)
        from pathlib import Path

        line = one_error_line(relaypass_cli("check", "random.toml", cwd=Path(tmp)))
        assert line.startswith("relaypass: error: random.toml")
        assert os.listdir(tmp) == ["random.toml"]


def test_the_seeds_load_run_and_write_inside_the_output_folder():
    """Mutations start from files that load and run, and that write where they may."""
    for seed in SEEDS:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "seed.toml")
            with open(path, "w") as fh:
                fh.write(seed)
            out = os.path.join(tmp, "out")
            os.mkdir(out)
            read_pipeline(path, out_dir=out).build()(_module())
            written = sorted(snapshot(out))
            if "DumpIR" in seed:
                assert "after.txt" in written and os.path.join("dumps", "000_input.relay") in written
            assert sorted(os.listdir(tmp)) == ["out", "seed.toml"]
