// Calling libgomp directly (expected: refused by the static check)
#include <string.h>
void GOMP_parallel(void (*fn)(void *), void *data, unsigned nthr, unsigned flags);
struct arg { int n; const double *A, *B; double *C; };
static void body(void *p) { struct arg *a = p; int n = a->n; memset(a->C, 0, 8 * n * n);
  for (int i = 0; i < n; i++) for (int k = 0; k < n; k++) for (int j = 0; j < n; j++) a->C[i*n+j] += a->A[i*n+k]*a->B[k*n+j]; }
void dgemm(int n, const double *A, const double *B, double *C) {
    struct arg a = {n, A, B, C};
    GOMP_parallel(body, &a, 1, 0);
}
