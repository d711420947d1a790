"""lab.policy.prompts: the execution model stated in a problem's prompt."""

from __future__ import annotations

import pytest

from lab.harness.problems import list_problems, load_problem
from lab.policy.prompts import prompt_text


@pytest.mark.parametrize("problem", list_problems())
def test_serial_prompt_takes_out_openmp(problem):
    text = prompt_text(problem, mode="serial")
    assert "may use OpenMP" not in text and "omp.h," not in text and "omp.h and" not in text
    assert text.endswith("(no #pragma omp, no omp.h, no omp_ functions).")
    assert "Execution model: OpenMP" in prompt_text(problem, mode="openmp", threads=2)
    assert prompt_text(problem) == load_problem(problem).prompt  # no mode: the problem's text as it is
