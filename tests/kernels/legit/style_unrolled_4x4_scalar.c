// expect: ok
// Heavily unrolled scalar 4x4 register blocking (16 named accumulators) with remainder loops for rows and columns; no intrinsics.
#include <stddef.h>

void kernel_4x4(int n, int i, int j, const double *A, const double *B, double *C)
{
    const double *a0 = A + (size_t)i * n;
    const double *a1 = a0 + n;
    const double *a2 = a1 + n;
    const double *a3 = a2 + n;

    double c00 = 0, c01 = 0, c02 = 0, c03 = 0;
    double c10 = 0, c11 = 0, c12 = 0, c13 = 0;
    double c20 = 0, c21 = 0, c22 = 0, c23 = 0;
    double c30 = 0, c31 = 0, c32 = 0, c33 = 0;

    for (int k = 0; k < n; k++) {
        const double *b = B + (size_t)k * n + j;
        const double b0 = b[0], b1 = b[1], b2 = b[2], b3 = b[3];
        const double x0 = a0[k], x1 = a1[k], x2 = a2[k], x3 = a3[k];

        c00 += x0 * b0; c01 += x0 * b1; c02 += x0 * b2; c03 += x0 * b3;
        c10 += x1 * b0; c11 += x1 * b1; c12 += x1 * b2; c13 += x1 * b3;
        c20 += x2 * b0; c21 += x2 * b1; c22 += x2 * b2; c23 += x2 * b3;
        c30 += x3 * b0; c31 += x3 * b1; c32 += x3 * b2; c33 += x3 * b3;
    }

    double *r0 = C + (size_t)i * n + j;
    double *r1 = r0 + n;
    double *r2 = r1 + n;
    double *r3 = r2 + n;
    r0[0] = c00; r0[1] = c01; r0[2] = c02; r0[3] = c03;
    r1[0] = c10; r1[1] = c11; r1[2] = c12; r1[3] = c13;
    r2[0] = c20; r2[1] = c21; r2[2] = c22; r2[3] = c23;
    r3[0] = c30; r3[1] = c31; r3[2] = c32; r3[3] = c33;
}

/* One element, for the ragged right edge and bottom rows. */
double kernel_1x1(int n, int i, int j, const double *A, const double *B)
{
    const double *a = A + (size_t)i * n;
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int k = 0;
    for (; k + 3 < n; k += 4) {
        s0 += a[k]     * B[(size_t)k * n + j];
        s1 += a[k + 1] * B[(size_t)(k + 1) * n + j];
        s2 += a[k + 2] * B[(size_t)(k + 2) * n + j];
        s3 += a[k + 3] * B[(size_t)(k + 3) * n + j];
    }
    for (; k < n; k++)
        s0 += a[k] * B[(size_t)k * n + j];
    return (s0 + s1) + (s2 + s3);
}

void dgemm(int n, const double *A, const double *B, double *C)
{
    const int n4 = n & ~3;

    for (int i = 0; i < n4; i += 4) {
        for (int j = 0; j < n4; j += 4)
            kernel_4x4(n, i, j, A, B, C);
        for (int j = n4; j < n; j++) {           /* right remainder columns */
            C[(size_t)i * n + j]       = kernel_1x1(n, i, j, A, B);
            C[(size_t)(i + 1) * n + j] = kernel_1x1(n, i + 1, j, A, B);
            C[(size_t)(i + 2) * n + j] = kernel_1x1(n, i + 2, j, A, B);
            C[(size_t)(i + 3) * n + j] = kernel_1x1(n, i + 3, j, A, B);
        }
    }
    for (int i = n4; i < n; i++)                 /* bottom remainder rows */
        for (int j = 0; j < n; j++)
            C[(size_t)i * n + j] = kernel_1x1(n, i, j, A, B);
}
