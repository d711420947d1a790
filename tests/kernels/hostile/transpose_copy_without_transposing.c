// expect: wrong_result problem: transpose
// Copies A into B unchanged (row-major read as column-major): only the diagonal is right.
#include <string.h>

void transpose(int n, const double *A, double *B)
{
    memcpy(B, A, (size_t)n * (size_t)n * sizeof(double));
}
