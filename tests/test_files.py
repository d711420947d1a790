"""lab.files and lab.paths: results survive a crash, locations are read when asked."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import lab
from lab import paths
from lab.files import JsonlAppender, read_jsonl, tree_hash, write_json, write_jsonl
from tests.conftest import ROOT


def test_write_json_replaces_whole_files_and_leaves_no_temporaries(tmp_path):
    target = tmp_path / "deep" / "metrics.json"
    write_json(target, {"a": 1})
    write_json(target, {"a": 2, "b": [1, 2]})
    assert json.loads(target.read_text()) == {"a": 2, "b": [1, 2]}
    assert os.listdir(target.parent) == ["metrics.json"]


def test_a_failed_write_keeps_the_old_file(tmp_path):
    target = tmp_path / "metrics.json"
    write_json(target, {"complete": True})
    with pytest.raises(TypeError):
        write_jsonl(target, [object.__new__(type("Unserializable", (), {"__str__": None}))])
    assert json.loads(target.read_text()) == {"complete": True} and os.listdir(tmp_path) == ["metrics.json"]


def test_jsonl_appends_flushed_lines_and_reading_skips_a_torn_tail(tmp_path):
    log = JsonlAppender(tmp_path / "train_log.jsonl")
    log.append({"step": 1})
    log.append({"step": 2})
    with open(log.path, "a") as f:
        f.write('{"step": 3, "lo')  # a writer killed mid-line
    assert read_jsonl(log.path) == [{"step": 1}, {"step": 2}]
    log.path.write_text('{"step": 1}\nnot json\n{"step": 3}\n')
    with pytest.raises(json.JSONDecodeError):  # damage inside the file is not silently skipped
        read_jsonl(log.path)


def test_a_missing_jsonl_file_has_no_records_only_when_allowed(tmp_path):
    assert read_jsonl(tmp_path / "excessive.jsonl", missing_ok=True) == []
    with pytest.raises(FileNotFoundError):
        read_jsonl(tmp_path / "excessive.jsonl")


def test_tree_hash_sees_every_file(tmp_path, tmp_path_factory):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.py").write_text("1")
    (tmp_path / "b.h").write_text("2")
    before = tree_hash(tmp_path)
    (tmp_path / "a" / "x.py").write_text("3")
    assert tree_hash(tmp_path) != before
    # Names and contents only: the same tree elsewhere hashes the same; a renamed file, or a byte
    # moved from one file to the other, does not.
    other = tmp_path_factory.mktemp("elsewhere")
    (other / "a").mkdir()
    (other / "a" / "x.py").write_text("3")
    (other / "b.h").write_text("2")
    assert tree_hash(other) == tree_hash(tmp_path)
    (other / "b.h").rename(other / "c.h")
    assert tree_hash(other) != tree_hash(tmp_path)
    (other / "c.h").rename(other / "b.h")
    (other / "a" / "x.py").write_text("32")
    (other / "b.h").write_text("")
    assert tree_hash(other) != tree_hash(tmp_path)
    # A skipped top-level entry counts as absent, and so do caches.
    (other / "a" / "x.py").unlink()
    (other / "a").rmdir()
    (other / "b.h").write_text("2")
    full = tree_hash(tmp_path)
    assert tree_hash(tmp_path, skip={"a"}) == tree_hash(other) != full
    (tmp_path / "a" / "__pycache__").mkdir()
    (tmp_path / "a" / "__pycache__" / "x.cpython-312.pyc").write_bytes(b"\0")
    assert tree_hash(tmp_path) == full
    # A file is left out by its relative path: changing it does not change the hash.
    skipped = tree_hash(tmp_path, skip={"a/x.py"})
    (tmp_path / "a" / "x.py").write_text("4")
    assert tree_hash(tmp_path, skip={"a/x.py"}) == skipped != tree_hash(tmp_path)


def test_the_measurement_version_names_only_modules_that_exist():
    from lab.provenance import MEASURED, NOT_MEASURED

    package = Path(lab.__file__).parent
    stale = [name for name in (*MEASURED, *NOT_MEASURED) if not (package / name).exists()]
    assert not stale, f"lab.provenance names modules that are gone: {stale}"
    assert not set(MEASURED) & set(NOT_MEASURED)


def test_paths_follow_the_environment_at_call_time(tmp_path, monkeypatch):
    monkeypatch.setenv("LAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("LAB_HARNESS_DIR", str(tmp_path / "harness"))
    assert paths.cache_dir() == tmp_path / "cache" and paths.harness_dir() == tmp_path / "harness"
    monkeypatch.delenv("LAB_HARNESS_DIR")
    assert paths.repo_root() == ROOT and paths.harness_dir() == ROOT / "harness"  # this checkout's
    assert (paths.harness_dir() / "bench.h").is_file()
