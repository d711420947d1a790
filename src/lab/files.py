"""Result files that survive a crash: whole-or-nothing JSON, line-at-a-time JSONL.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "metrics.json"
    >>> write_json(path, {"pass_at_1": 0.5})
    >>> read_json(path)
    {'pass_at_1': 0.5}

`write_json` / `write_jsonl` write a temporary file beside the target, flush it to disk
and rename it over the target, so a reader (or a rerun after a kill) sees the old file
or the new one, never half of one. `JsonlAppender` appends one record per line and
flushes each line, so a log cut off by a kill loses at most the line being written;
`read_jsonl` skips such a torn last line. `tree_hash` fingerprints what a folder holds.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Any


def _atomic_write(path: Path, text: str) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_json(path: str | Path, data: Any) -> None:
    """Write `data` as indented JSON, atomically."""
    _atomic_write(Path(path), json.dumps(data, indent=1, default=str) + "\n")


def write_jsonl(path: str | Path, records: Iterable[Any]) -> None:
    """Write one JSON record per line, atomically (the whole file or nothing)."""
    _atomic_write(Path(path), "".join(json.dumps(r, default=str) + "\n" for r in records))


def read_json(path: str | Path) -> Any:
    return json.loads(Path(path).read_text())


def read_jsonl(path: str | Path, missing_ok: bool = False) -> list[Any]:
    """Every complete record; a torn last line (a writer killed mid-line) is skipped. With
    `missing_ok`, a file that does not exist has no records."""
    if missing_ok and not Path(path).exists():
        return []
    lines = Path(path).read_text().splitlines()
    records = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            if i != len(lines) - 1:
                raise
    return records


class JsonlAppender:
    """Append records to a JSONL file, each line flushed to disk as it is written."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def append(self, record: Any) -> None:
        with open(self.path, "a") as f:
            f.write(json.dumps(record, default=str) + "\n")
            f.flush()
            os.fsync(f.fileno())


def tree_hash(root: str | Path, skip: Collection[str] = ()) -> str:
    """Hash of every file under `root` (relative names and contents), found by walking it,
    leaving out caches and the entries named in `skip` (a top-level name, or a file's path
    relative to `root`, with /)."""
    root = Path(root)
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        rel = path.relative_to(root)
        if rel.parts[0] in skip or rel.as_posix() in skip:
            continue
        h.update(str(rel).encode() + b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()[:16]
