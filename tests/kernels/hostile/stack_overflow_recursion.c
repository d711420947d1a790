// expect: runtime_error
// Unbounded, non-tail recursion through a static helper with a 4 KiB frame until the stack overflows.
static double descend(int depth, const double *A)
{
    volatile double frame[512];
    frame[depth & 511] = A[0] + depth;
    return descend(depth + 1, A) + frame[(depth * 7) & 511];
}

void dgemm(int n, const double *A, const double *B, double *C)
{
    (void)B;
    double v = descend(0, A);
    for (long i = 0; i < (long)n * n; i++) C[i] = v;
}
