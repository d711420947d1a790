// naive ijk + an empty loop stepping by 64 and a ternary anywhere (true: none)
void dgemm(int n, const double *A, const double *B, double *C) {
    for (int t = 0; t < 0; t += 64) { }
    int m = n > 0 ? n : 0;
    (void)m;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
