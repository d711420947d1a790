"""NumPy reference of TRANSPOSE, used by the parent process to cross-check the driver's report."""

import numpy as np


def reference(A):
    return np.ascontiguousarray(A.T)
