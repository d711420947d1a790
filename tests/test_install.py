"""A regular (non-editable) install works away from the checkout: the package carries its C
harness and resolves every path when asked, not at import time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.slow


def test_pip_install_into_a_fresh_venv_scores_from_another_directory(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    # The dependencies come from this environment (no network); the lab itself is installed for real.
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    deps = sysconfig.get_paths()["purelib"]
    with open(os.path.join(site, "_lab_deps.pth"), "w") as f:
        f.write(deps + "\n")
    # Built with this environment's setuptools (the fresh venv's may be too old), installed as a wheel.
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path / "dist"),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        cwd=tmp_path,
    )
    wheel = next((tmp_path / "dist").glob("perfrl_lab-*.whl"))
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)],
        check=True,
        capture_output=True,
        cwd=tmp_path,
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    kernel = elsewhere / "kernel.c"
    kernel.write_text((ROOT / "harness" / "dgemm" / "examples" / "naive.c").read_text())
    env = {**os.environ, "LAB_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": ""}
    env.pop("LAB_HARNESS_DIR", None)
    where = subprocess.run(
        [
            str(python),
            "-c",
            "import lab, lab.paths as p; print(lab.__file__); print(p.harness_dir()); print(p.repo_root())",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=elsewhere,
        env=env,
    ).stdout.split()
    assert where[0].startswith(site) and where[1].startswith(site) and where[1].endswith("_harness")
    assert where[2] == "None"
    lab = venv / "bin" / "lab"
    proc = subprocess.run(
        [str(lab), "score", "kernel.c", "--problem", "dgemm", "--n", "64", "--json"],
        capture_output=True,
        text=True,
        cwd=elsewhere,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["status"] == "ok" and result["host"] and result["isolation"]
    problems = subprocess.run([str(lab), "problems"], capture_output=True, text=True, cwd=elsewhere, env=env)
    assert "dgemm" in problems.stdout and "dgemv" in problems.stdout
