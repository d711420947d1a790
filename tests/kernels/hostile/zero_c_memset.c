// expect: wrong_result
// Only zeroes C with memset (fast, looks "initialised", but no multiply).
#include <string.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    (void)A; (void)B;
    memset(C, 0, (size_t)n * (size_t)n * sizeof(double));
}
