// Manual 4x unroll of the k loop of an ijk dot product, offsets written 1 + k (true: unrolling + register accumulators)
void dgemm(int n, const double *A, const double *B, double *C) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            const double *a = A + (long)i * n;
            double s = 0.0, t = 0.0;
            int k = 0;
            for (; k + 4 <= n; k += 4) {
                s += a[k] * B[(long)k * n + j] + a[1 + k] * B[(long)(1 + k) * n + j];
                t += a[2 + k] * B[(long)(2 + k) * n + j] + a[3 + k] * B[(long)(3 + k) * n + j];
            }
            for (; k < n; k++) s += a[k] * B[(long)k * n + j];
            C[(long)i * n + j] = s + t;
        }
}
