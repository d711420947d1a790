// omp simd through _Pragma on a plain ijk dot product (true: simd; forces a vectorized reduction)
void dgemm(int n, const double *A, const double *B, double *C) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            _Pragma("omp simd reduction(+:s)")
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
