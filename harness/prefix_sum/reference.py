"""NumPy reference of PREFIX_SUM (inclusive scan of int64), used by the parent process to
cross-check the driver's report. The inputs are the generic ones (stream 0, bench_fill_i64)."""

import numpy as np


def reference(x):
    return np.cumsum(x, dtype=np.int64)
