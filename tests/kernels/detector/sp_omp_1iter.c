// naive ijk + '#pragma omp parallel for' on a loop of one iteration (true: none)
void dgemm(int n, const double *A, const double *B, double *C) {
    double z = 0.0;
#pragma omp parallel for
    for (int t = 0; t < 1; t++) z += 0.0;
    (void)z;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
