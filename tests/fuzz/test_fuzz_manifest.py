"""Fuzzing plugin manifests: whatever a manifest holds, it is read or a ManifestError.

Mutations start from the standard passes' and instruments' manifests.  In
process, :func:`parse_manifest` must give declarations or a ManifestError
naming the distribution (and the key path, when the TOML parses); installed
as a distribution's manifest beside a healthy plugin, discovery must never
raise and the healthy plugin's pass must still build.  The CLI, given random
bytes as a manifest, answers a pipeline naming that plugin's pass with one
line and exit 2.
"""

from __future__ import annotations

import os
import sys
import tempfile
import warnings
from pathlib import Path

from fake_plugins import (
    MANIFEST_NAME,
    PASS_MODULE,
    add_distribution,
    one_error_line,
    pass_manifest,
    relaypass_cli,
)
from fuzz_kit import examples, mutated_bytes, mutated_document, no_hang
from hypothesis import given, settings
from hypothesis import strategies as st

import relaypass_instruments
import relaypass_std
from relaypass.entry_points import PluginWarning
from relaypass.plugins.manifest import parse_manifest, read_manifest
from relaypass.transform import get_pass, list_passes, plugin_errors, refresh_plugins
from relaypass.transform.errors import ManifestError
from relaypass.transform.registry import NameShadowedError
from relaypass.transform.specs import Origin

SEEDS = [
    Path(os.path.dirname(relaypass_std.__file__), MANIFEST_NAME).read_text(encoding="utf-8"),
    Path(os.path.dirname(relaypass_instruments.__file__), MANIFEST_NAME).read_text(
        encoding="utf-8"),
]
ORIGIN = Origin("fuzzed-dist", "0.0.1", "/site/fuzzed/relaypass-plugin.toml", "fuzzed")


def _check_text(content: bytes) -> None:
    with no_hang(), tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, MANIFEST_NAME)
        with open(path, "wb") as fh:
            fh.write(content)
        try:
            read_manifest(path, ORIGIN)
        except ManifestError as exc:
            assert (exc.distribution, exc.version) == ("fuzzed-dist", "0.0.1")
            assert str(exc).startswith("invalid plugin manifest of fuzzed-dist 0.0.1: ")
            assert len(str(exc)) < 3000


@settings(max_examples=examples(200))
@given(content=mutated_bytes(SEEDS))
def test_mutated_manifest_bytes(content):
    _check_text(content)


@settings(max_examples=examples(200))
@given(text=mutated_document(SEEDS))
def test_mutated_manifest_documents(text):
    try:
        parse_manifest(text, ORIGIN)
    except ManifestError as exc:
        # A document that parses is wrong somewhere: the message says where (a key path).
        where = str(exc).split(f"{ORIGIN.manifest}: ", 1)[1]
        assert where.split(":", 1)[0].split("[", 1)[0].split(".", 1)[0] in (
            "format", "pass", "instrument") or where.startswith("unknown key"), where


@settings(max_examples=examples(15))
@given(content=mutated_bytes(SEEDS))
def test_an_installed_mutated_manifest_hides_no_other_plugin(content):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        add_distribution(root, "fuzzed-dist", "0.0.1", "fuzzed_pkg", content,
                         {"impl": PASS_MODULE})
        add_distribution(root, "healthy-dist", "1.0", "healthy_pkg",
                         pass_manifest("HealthyPass", "healthy_pkg.impl:H"),
                         {"impl": PASS_MODULE + "\nH = make('healthy')\n"})
        sys.path.insert(0, tmp)
        refresh_plugins()
        try:
            with no_hang():
                with warnings.catch_warnings():
                    # Declaring a standard pass's name is warned about (and contained).
                    warnings.simplefilter("ignore", PluginWarning)
                    passes = {s.name: s for s in list_passes()}
                errors = [e for e in plugin_errors() if e.distribution == "fuzzed-dist"]
                assert all(isinstance(e, (ManifestError, NameShadowedError)) for e in errors)
                assert passes["InferType"].distribution == "relaypass"
                assert passes["FoldConstant"].distribution == "relaypass"
                get_pass("HealthyPass")
        finally:
            sys.path.remove(tmp)
            for name in list(sys.modules):
                if name.split(".")[0] in ("fuzzed_pkg", "healthy_pkg"):
                    del sys.modules[name]
            refresh_plugins()


@settings(max_examples=examples(3))
@given(content=st.binary(min_size=1, max_size=300))
def test_the_cli_answers_random_bytes_as_a_manifest_in_one_line(content):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        add_distribution(root / "site", "random-dist", "0.3", "random_pkg", content)
        (root / "p.toml").write_text('passes = ["RandomPass"]\n')
        line = one_error_line(relaypass_cli("check", "p.toml", cwd=root, paths=(root / "site",)))
        assert "RandomPass" in line
