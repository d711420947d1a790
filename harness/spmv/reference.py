"""NumPy reference of SPMV, used by the parent process to cross-check the driver's report.

`make_inputs` mirrors spmv_generate() of driver.c bit for bit (its comment describes the
matrix): the CSR structure is no plain stream, so the generic generator cannot make it.
"""

import numpy as np

from lab.harness.problems import draw, generate, stream_key

PER_ROW = 16  # average nonzeros per row: nnz = 16 n (n >= 32)
BAND = 128  # width of a banded row's column window


def make_inputs(seed, n):
    """[rowptr (int32, n+1), col (int32, 16n), val (f64, 16n), x (f64, n)] as the driver fills them."""
    cap = PER_ROW * n
    i = np.arange(n, dtype=np.int64)
    z = draw(stream_key(seed, 0), (n + 1) // 2)[i // 2]
    d = (z % np.uint64(33)).astype(np.int64) - 16
    c = np.where((i | 1) >= n, PER_ROW, np.where(i & 1, PER_ROW - d, PER_ROW + d))
    c = np.minimum(c, n)
    banded = ((z >> (np.uint64(32) + (i & 1).astype(np.uint64))) & np.uint64(1)).astype(bool)
    w = min(BAND, n)
    lo = np.where(banded, np.clip(i - BAND // 2, 0, n - w), 0)
    span = np.where(banded, w, n)
    rowptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(c, out=rowptr[1:])
    nnz = int(rowptr[-1])
    row = np.repeat(i, c)
    b = np.arange(nnz, dtype=np.int64) - rowptr[row]
    cr, lr, sr = c[row], lo[row], span[row]
    a = lr + b * sr // cr
    e = lr + (b + 1) * sr // cr
    offset = (draw(stream_key(seed, 1), nnz) % (e - a).astype(np.uint64)).astype(np.int64)
    col = np.zeros(cap, dtype=np.int32)
    col[:nnz] = a + offset
    val = generate(seed, 2, (cap,))
    val[nnz:] = 0.0
    x = generate(seed, 3, (n,))
    return [rowptr.astype(np.int32), col, val, x]


def reference(rowptr, col, val, x):
    n = len(x)
    nnz = int(rowptr[n])
    counts = np.diff(rowptr.astype(np.int64))
    row = np.repeat(np.arange(n), counts)
    return np.bincount(row, weights=val[:nnz] * x[col[:nnz]], minlength=n).astype(np.float64)
