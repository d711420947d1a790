// expect: forbidden
// Computed include: the header name is built by macros (#include HDR), here expanding to <stdio.h>.
#define STR_(x) #x
#define STR(x) STR_(x)
#define HDR STR(std##io.h)
#include HDR

void dgemm(int n, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
