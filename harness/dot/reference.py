"""NumPy reference of DOT, used by the parent process to cross-check the driver's report."""

import math

import numpy as np


def reference(x, y):
    return np.array([math.fsum(x * y)])
