"""The harness's deferred cleanups: the calibration file is read once per version of it (not once
per calibration asked), whatever one evaluation asks of it. (The sandbox's namespaces and public
lock helpers are tested at the end of tests/test_sandbox.py.)"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from lab.files import write_json
from lab.harness import plausibility
from lab.harness.evaluate import evaluate
from tests.conftest import EXAMPLES, TINY_MEASURE


@pytest.fixture
def reads(monkeypatch) -> list[Path]:
    """Every read of a calibration file from now on, by path (the memo of earlier reads emptied)."""
    monkeypatch.setattr(plausibility, "_loaded", {})
    seen: list[Path] = []
    real = plausibility._read

    def counting(path: Path) -> dict:
        seen.append(path)
        return real(path)

    monkeypatch.setattr(plausibility, "_read", counting)
    return seen


def test_the_calibration_file_is_read_again_only_when_it_changes(tmp_path, monkeypatch, reads):
    path = tmp_path / "calibration" / "machine.json"
    monkeypatch.setattr(plausibility, "_path", lambda: path)
    assert plausibility._load() == {} and reads == []  # no file: nothing to read
    write_json(path, {"a": 1.0})
    assert plausibility._load() == {"a": 1.0} and plausibility._load() == {"a": 1.0} and len(reads) == 1
    plausibility._load()["a"] = 7.0  # a caller's copy: the memo keeps the file's values
    assert plausibility._load() == {"a": 1.0} and len(reads) == 1
    plausibility._store({"b": 2.0})  # a new calibration (another process's write looks the same)
    assert plausibility._load() == {"a": 1.0, "b": 2.0} and len(reads) == 2
    before = os.stat(path)
    path.write_text('{"a": 3.0, "b": 2.0}\n')  # rewritten in place (the same inode): its mtime tells
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1))
    assert os.stat(path).st_ino == before.st_ino
    assert plausibility._load() == {"a": 3.0, "b": 2.0} and len(reads) == 3


def test_one_evaluation_reads_the_calibration_once(reads):
    """Before, one evaluate() read the file for each calibration it asked for: the peak, the
    bandwidth levels and cache sizes, OpenBLAS and the baseline before measuring, and the peak,
    bandwidths, caches and baseline again for the verdict's bounds (9 reads for this one)."""
    naive = (EXAMPLES / "dgemm" / "examples" / "naive.c").read_text()
    config = dataclasses.replace(TINY_MEASURE, mode="serial")
    evaluate(naive, "dgemm", config, cache=False)  # calibrates what this size needs, if not yet done
    plausibility._loaded.clear()
    reads.clear()
    result = evaluate(naive, "dgemm", config, cache=False)
    assert result.status == "ok", result.detail
    assert reads == [plausibility._path()], reads
