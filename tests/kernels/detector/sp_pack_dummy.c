// naive ijk + a malloc'd one-element buffer written from A and freed (true: none)
#include <stdlib.h>
void dgemm(int n, const double *A, const double *B, double *C) {
    double *buf = malloc(sizeof(double));
    if (buf) { buf[0] = A[0]; free(buf); }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
