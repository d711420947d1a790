// expect: ok
// Cache-oblivious recursive divide-and-conquer: split the largest of m, n, k in half until a small ikj base case; exported helpers.
#include <stddef.h>
#include <string.h>

#define LEAF_SIZE 32

/* Base case: C[m x n] += A[m x k] * B[k x n], all with leading dimension ld. */
void leaf_multiply(int m, int n, int k, const double *A, const double *B, double *C, int ld)
{
    for (int i = 0; i < m; i++) {
        double *c = C + (size_t)i * ld;
        const double *a = A + (size_t)i * ld;
        for (int p = 0; p < k; p++) {
            const double aip = a[p];
            const double *b = B + (size_t)p * ld;
            for (int j = 0; j < n; j++)
                c[j] += aip * b[j];
        }
    }
}

void recursive_multiply(int m, int n, int k, const double *A, const double *B, double *C, int ld)
{
    if (m <= LEAF_SIZE && n <= LEAF_SIZE && k <= LEAF_SIZE) {
        leaf_multiply(m, n, k, A, B, C, ld);
        return;
    }
    if (m >= n && m >= k) {
        /* split rows of A and C */
        int m1 = m / 2;
        recursive_multiply(m1, n, k, A, B, C, ld);
        recursive_multiply(m - m1, n, k, A + (size_t)m1 * ld, B, C + (size_t)m1 * ld, ld);
    } else if (n >= k) {
        /* split columns of B and C */
        int n1 = n / 2;
        recursive_multiply(m, n1, k, A, B, C, ld);
        recursive_multiply(m, n - n1, k, A, B + n1, C + n1, ld);
    } else {
        /* split the inner dimension: both halves accumulate into the same C */
        int k1 = k / 2;
        recursive_multiply(m, n, k1, A, B, C, ld);
        recursive_multiply(m, n, k - k1, A + k1, B + (size_t)k1 * ld, C, ld);
    }
}

void dgemm(int n, const double *A, const double *B, double *C)
{
    memset(C, 0, (size_t)n * (size_t)n * sizeof(double));
    recursive_multiply(n, n, n, A, B, C, n);
}
