// naive ijk + an unused static function holding the pragma (true: none)
static void never(int n, double *x) {
#pragma omp parallel for
    for (int i = 0; i < n; i++) x[i] = 0;
}
void dgemm(int n, const double *A, const double *B, double *C) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
