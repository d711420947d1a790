"""The excessive-speedup guard (lab.rl.guard): what it flags, against which prior."""

from __future__ import annotations

from lab.rl.guard import ExcessiveGuard


def test_the_prior_is_the_best_of_earlier_batches_per_problem_and_mode():
    guard = ExcessiveGuard(2.0)
    assert guard.check([("dgemm", "serial", 10.0), ("dgemm", "openmp", 30.0), ("dot", "serial", None)]) == [
        False,
        False,
        False,
    ]
    # 25 > 2 x 10 in serial; 50 is not above 2 x 30 in openmp; dot has no correct kernel yet.
    assert guard.check([("dgemm", "serial", 25.0), ("dgemm", "openmp", 50.0), ("dot", "serial", 9.0)]) == [
        True,
        False,
        False,
    ]
    assert guard.best == {("dgemm", "serial"): 25.0, ("dgemm", "openmp"): 50.0, ("dot", "serial"): 9.0}


def test_failures_are_never_flagged_and_do_not_set_the_prior():
    guard = ExcessiveGuard.from_samples(
        3.0,
        [
            {"problem": "dgemm", "mode": "serial", "status": "ok", "gflops": 4.0},
            {"problem": "dgemm", "mode": "serial", "status": "wrong_result", "gflops": None},
            {"problem": "dgemm", "mode": "serial", "status": "suspicious", "gflops": 900.0},
        ],
    )
    assert guard.best == {("dgemm", "serial"): 4.0}
    assert guard.check([("dgemm", "serial", None), ("dgemm", "serial", 12.0), ("dgemm", "serial", 12.5)]) == [
        False,
        False,
        True,
    ]
