"""NumPy reference of HISTOGRAM, used by the parent process to cross-check the driver's report,
and the driver's own input generator (hist_fill in driver.c), mirrored bit for bit."""

import numpy as np

from lab.harness.problems import draw, stream_key


def make_inputs(seed, n):
    """x[i] = the hot byte if bit 0 of draw i of stream 0 is set, else that draw's top byte; the
    hot byte is the top byte of draw 0 of stream 1."""
    z = draw(stream_key(seed, 0), n)
    hot = np.uint8(draw(stream_key(seed, 1), 1)[0] >> np.uint64(56))
    uniform = (z >> np.uint64(56)).astype(np.uint8)
    return [np.where((z & np.uint64(1)) == 1, hot, uniform).astype(np.uint8)]


def reference(x):
    return np.bincount(x, minlength=256).astype(np.int64)
