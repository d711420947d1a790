"""lab.policy.prompts: the execution model stated in a problem's prompt."""

from __future__ import annotations

import pytest

from lab.harness.problems import list_problems, load_problem
from lab.policy.prompts import prompt_text


@pytest.mark.parametrize("problem", list_problems())
def test_serial_prompt_takes_out_openmp(problem):
    text = prompt_text(problem, mode="serial")
    body, _, sentence = text.rpartition("\n\n")
    assert "OpenMP" not in body and "omp.h" not in body
    assert sentence.startswith("Execution model: serial.")
    assert "Execution model: OpenMP" in prompt_text(problem, mode="openmp", threads=2)
    assert prompt_text(problem) == load_problem(problem).prompt  # no mode: the problem's text as it is
