"""`make lab` serves JupyterLab at the repository root with the project's kernel, as root too,
without a browser; checked through the server's REST API (kernelspecs, contents)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> dict | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as reply:
            return json.loads(reply.read())
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return None


def test_make_lab_serves_the_repo_root_with_the_project_kernel(tmp_path):
    port, token = _free_port(), "perfrl-test-token"
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["JUPYTER_RUNTIME_DIR"] = str(tmp_path / "runtime")
    server = subprocess.Popen(
        [
            "make",
            "-s",
            "lab",
            f"PORT={port}",
            f"JUPYTER_ARGS=--ServerApp.ip=127.0.0.1 --IdentityProvider.token={token}",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        base = f"http://127.0.0.1:{port}/api"
        specs = None
        deadline = time.monotonic() + 90
        while specs is None and time.monotonic() < deadline and server.poll() is None:
            time.sleep(0.5)
            specs = _get(f"{base}/kernelspecs?token={token}")
        assert specs is not None, "the server did not answer"
        assert "perfrl-lab" in specs["kernelspecs"]
        assert specs["kernelspecs"]["perfrl-lab"]["spec"]["display_name"] == "perfRL lab"
        root = _get(f"{base}/contents?token={token}")
        names = {item["name"] for item in root["content"]}
        assert {"notebooks", "configs", "harness", "results", "Makefile"} <= names
        notebook = _get(f"{base}/contents/notebooks/01_baseline.ipynb?token={token}")
        assert notebook["content"]["metadata"]["kernelspec"]["name"] == "perfrl-lab"
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # its own session: only the server and make
        try:
            server.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.communicate()
