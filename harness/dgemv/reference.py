"""NumPy reference of DGEMV, used by the parent process to cross-check the driver's report."""


def reference(A, x):
    return A @ x
