// jki: the innermost loop walks down a column of C (the worst order); detected as loop_reorder
void dgemm(int n, const double *A, const double *B, double *C) {
    for (int j = 0; j < n; j++) {
        for (int i = 0; i < n; i++) C[i*n+j] = 0;
        for (int k = 0; k < n; k++) { double b = B[k*n+j]; for (int i = 0; i < n; i++) C[i*n+j] += A[i*n+k] * b; }
    }
}
