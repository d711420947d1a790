// expect: wrong_result problem: transpose
// Half the work: treats A as if it were symmetric, transposing the upper triangle and mirroring it into the lower one.
void transpose(int n, const double *A, double *B)
{
    for (int i = 0; i < n; i++)
        for (int j = i; j < n; j++) {
            B[j * n + i] = A[i * n + j];
            B[i * n + j] = A[i * n + j];
        }
}
