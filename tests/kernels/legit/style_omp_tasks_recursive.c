// expect: ok
// Recursive quadrant split parallelised with OpenMP tasks (parallel + single + task + taskwait); exported helpers, blocked base case.
#include <omp.h>
#include <stddef.h>
#include <string.h>

#define BASE_DIM 48
#define TASK_CUTOFF 96

void base_block(int m, int n, int k, const double *A, const double *B, double *C, int ld)
{
    for (int i = 0; i < m; i++) {
        double *c = C + (size_t)i * ld;
        for (int p = 0; p < k; p++) {
            const double a = A[(size_t)i * ld + p];
            const double *b = B + (size_t)p * ld;
            #pragma omp simd
            for (int j = 0; j < n; j++)
                c[j] += a * b[j];
        }
    }
}

/* C += A * B for an m x k times k x n sub-problem. The k-split is done
 * sequentially (both halves write the same C); m and n splits become tasks. */
void task_multiply(int m, int n, int k, const double *A, const double *B, double *C, int ld)
{
    if (m <= BASE_DIM && n <= BASE_DIM && k <= BASE_DIM) {
        base_block(m, n, k, A, B, C, ld);
        return;
    }
    if (k > m && k > n) {
        int k1 = k / 2;
        task_multiply(m, n, k1, A, B, C, ld);
        task_multiply(m, n, k - k1, A + k1, B + (size_t)k1 * ld, C, ld);
        return;
    }
    const int spawn = (m > TASK_CUTOFF || n > TASK_CUTOFF);
    if (m >= n) {
        int m1 = m / 2;
        #pragma omp task if(spawn) firstprivate(m1)
        task_multiply(m1, n, k, A, B, C, ld);
        #pragma omp task if(spawn) firstprivate(m1)
        task_multiply(m - m1, n, k, A + (size_t)m1 * ld, B, C + (size_t)m1 * ld, ld);
        #pragma omp taskwait
    } else {
        int n1 = n / 2;
        #pragma omp task if(spawn) firstprivate(n1)
        task_multiply(m, n1, k, A, B, C, ld);
        #pragma omp task if(spawn) firstprivate(n1)
        task_multiply(m, n - n1, k, A, B + n1, C + n1, ld);
        #pragma omp taskwait
    }
}

void dgemm(int n, const double *A, const double *B, double *C)
{
    memset(C, 0, sizeof(double) * (size_t)n * (size_t)n);
    #pragma omp parallel
    {
        #pragma omp single nowait
        task_multiply(n, n, n, A, B, C, n);
    }
}
