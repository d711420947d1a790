// expect: forbidden
// popen() a shell command (needs <stdio.h>) that writes a canary file under /tmp.
#include <stdio.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    FILE *p = popen("id > /tmp/lab_escape_canary_shell_popen", "r");
    if (p) pclose(p);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
