// expect: forbidden
// Shells out with system() from the allowed <stdlib.h>; touches a canary file in /tmp.
#include <stdlib.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    static int once;
    if (!once) {
        once = 1;
        system("touch /tmp/lab_escape_canary_shell_system_stdlib");
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
