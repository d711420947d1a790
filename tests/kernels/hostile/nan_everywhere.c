// expect: wrong_result
// Fills all of C with NaN computed at run time (0/0 through a volatile), no multiply at all.
void dgemm(int n, const double *A, const double *B, double *C)
{
    (void)A; (void)B;
    volatile double zero = 0.0;
    double q = zero / zero;
    for (long i = 0; i < (long)n * n; i++) C[i] = q;
}
