// Multithreading with no omp pragma: GCC auto-parallelization (libgomp) via an optimize pragma
#pragma GCC optimize("tree-parallelize-loops=4")
static void mm(int n, const double *restrict A, const double *restrict B, double *restrict C) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
void dgemm(int n, const double *A, const double *B, double *C) { mm(n, A, B, C); }
