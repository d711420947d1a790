// expect: wrong_result
// Correct signature, empty body: C keeps its NaN garbage.
void dgemm(int n, const double *A, const double *B, double *C)
{
    (void)n; (void)A; (void)B; (void)C;
}
