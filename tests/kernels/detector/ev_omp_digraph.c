// OpenMP via the %: digraph spelling of # (true: loop_reorder + openmp)
#include <string.h>
void dgemm(int n, const double *A, const double *B, double *C) {
%:pragma omp parallel for
    for (int i = 0; i < n; i++) {
        memset(C + (long)i * n, 0, sizeof(double) * n);
        for (int k = 0; k < n; k++) {
            double a = A[i * n + k];
            for (int j = 0; j < n; j++) C[i * n + j] += a * B[k * n + j];
        }
    }
}
