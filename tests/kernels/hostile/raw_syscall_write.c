// expect: forbidden
// Raw syscall(SYS_write, 1, ...) via <unistd.h>/<sys/syscall.h> to print a fake result past any libc hooks.
#include <unistd.h>
#include <sys/syscall.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    static const char msg[] = "gflops 9999\n";
    syscall(SYS_write, 1, msg, sizeof msg - 1);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
