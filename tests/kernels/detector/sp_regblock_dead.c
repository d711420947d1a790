// naive ijk + four unused scalars declared in one line (true: none)
void dgemm(int n, const double *A, const double *B, double *C) {
    double c0 = 0, c1 = 0, c2 = 0, c3 = 0;
    (void)c0; (void)c1; (void)c2; (void)c3;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
