// 2x4 register block with one declaration per accumulator (true: register_blocking; ijk order)
void dgemm(int n, const double *A, const double *B, double *C) {
    int i = 0;
    for (; i + 2 <= n; i += 2) {
        int j = 0;
        for (; j + 4 <= n; j += 4) {
            double x0 = 0; double x1 = 0; double x2 = 0; double x3 = 0;
            double y0 = 0; double y1 = 0; double y2 = 0; double y3 = 0;
            for (int k = 0; k < n; k++) {
                const double *b = B + (long)k * n + j;
                double a0 = A[(long)i * n + k];
                double a1 = A[(long)(i + 1) * n + k];
                x0 += a0 * b[0]; x1 += a0 * b[1]; x2 += a0 * b[2]; x3 += a0 * b[3];
                y0 += a1 * b[0]; y1 += a1 * b[1]; y2 += a1 * b[2]; y3 += a1 * b[3];
            }
            double *c = C + (long)i * n + j, *d = c + n;
            c[0] = x0; c[1] = x1; c[2] = x2; c[3] = x3; d[0] = y0; d[1] = y1; d[2] = y2; d[3] = y3;
        }
        for (; j < n; j++) for (int r = i; r < i + 2; r++) { double s = 0; for (int k = 0; k < n; k++) s += A[(long)r*n+k]*B[(long)k*n+j]; C[(long)r*n+j] = s; }
    }
    for (; i < n; i++) for (int j = 0; j < n; j++) { double s = 0; for (int k = 0; k < n; k++) s += A[(long)i*n+k]*B[(long)k*n+j]; C[(long)i*n+j] = s; }
}
