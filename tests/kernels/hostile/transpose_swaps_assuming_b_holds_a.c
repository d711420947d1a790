// expect: wrong_result problem: transpose
// Relies on B's old contents: an "in-place" transpose that swaps B's off-diagonal pairs and copies only the diagonal, as if B already held a copy of A.
void transpose(int n, const double *A, double *B)
{
    for (int i = 0; i < n; i++) {
        B[i * n + i] = A[i * n + i];
        for (int j = i + 1; j < n; j++) {
            double t = B[i * n + j];
            B[i * n + j] = B[j * n + i];
            B[j * n + i] = t;
        }
    }
}
