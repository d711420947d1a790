// expect: timeout
// Correct signature, allowed headers only, then `for (;;) {}` forever.
void dgemm(int n, const double *A, const double *B, double *C)
{
    (void)n; (void)A; (void)B; (void)C;
    for (;;) {
    }
}
