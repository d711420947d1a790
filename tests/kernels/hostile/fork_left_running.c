// expect: forbidden
// Forks a child that outlives the call (sleeps 20 s, then _exit(0)); parent computes a correct C.
#include <unistd.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    pid_t pid = fork();
    if (pid == 0) {
        sleep(20);   /* left running after the kernel returns; ends by itself */
        _exit(0);
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
