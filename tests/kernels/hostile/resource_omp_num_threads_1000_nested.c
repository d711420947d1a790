// expect: ok
// Asks for 1000 OpenMP threads with num_threads(1000) (an allowed clause) and for nested parallel regions: OMP_THREAD_LIMIT and OMP_MAX_ACTIVE_LEVELS cap both, so this is just a correct kernel.
#include <stddef.h>
#include <omp.h>

void dgemm(int n, const double *A, const double *B, double *C) {
#pragma omp parallel for num_threads(1000) schedule(static)
    for (int i = 0; i < n; i++) {
#pragma omp parallel for num_threads(1000)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[(size_t)i * n + k] * B[(size_t)k * n + j];
            C[(size_t)i * n + j] = s;
        }
    }
}
