// expect: forbidden
// Spawns a detached pthread (forbidden header) that spins for a few seconds after the kernel returns, stealing CPU from the timer.
#include <pthread.h>

static void *spin(void *arg)
{
    volatile unsigned long x = 0;
    (void)arg;
    for (unsigned long i = 0; i < 2000000000UL; i++) x += i; /* a few seconds, then ends */
    return 0;
}

void dgemm(int n, const double *A, const double *B, double *C)
{
    pthread_t t;
    if (pthread_create(&t, 0, spin, 0) == 0) pthread_detach(t);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
