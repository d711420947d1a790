// Explicit AVX-512 via GCC vector extensions spelled __vector_size__ (true: loop_reorder + simd)
typedef double v8d __attribute__((__vector_size__(64), __aligned__(8)));
void dgemm(int n, const double *A, const double *B, double *C) {
    for (int i = 0; i < n; i++) {
        double *c = C + (long)i * n;
        for (int j = 0; j < n; j++) c[j] = 0.0;
        for (int k = 0; k < n; k++) {
            const double a = A[(long)i * n + k];
            const double *b = B + (long)k * n;
            v8d av = {a, a, a, a, a, a, a, a};
            int j = 0;
            for (; j + 8 <= n; j += 8) *(v8d *)(c + j) += av * *(const v8d *)(b + j);
            for (; j < n; j++) c[j] += a * b[j];
        }
    }
}
