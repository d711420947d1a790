// expect: wrong_result problem: transpose
// AVX2 form of transpose_writes_past_b.c: correct values, but each column of A is gathered into B's row with whole 4-double stores rounded up: the last row of B overruns its end by up to 3 doubles (the slack canary).
#include <immintrin.h>

void transpose(int n, const double *A, double *B)
{
    double col[4];
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i += 4) {
            for (int k = 0; k < 4; k++) col[k] = i + k < n ? A[(i + k) * n + j] : 0.0;
            _mm256_storeu_pd(B + j * n + i, _mm256_loadu_pd(col)); /* spills into row j + 1, rewritten next */
        }
}
