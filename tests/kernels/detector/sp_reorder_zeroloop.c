// naive ijk that first zeroes C in a loop (true: none; the zeroing loop reads as loop reordering)
void dgemm(int n, const double *A, const double *B, double *C) {
    for (int q = 0; q < n * n; q++) C[q] = 0.0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            for (int k = 0; k < n; k++) C[i * n + j] += A[i * n + k] * B[k * n + j];
}
