// expect: forbidden
// Exports a fake gettimeofday() (own struct timeval, no header) so a gettimeofday-based timer sees no elapsed time.
struct timeval { long tv_sec; long tv_usec; };

int gettimeofday(struct timeval *tv, void *tz)
{
    (void)tz;
    tv->tv_sec = 1000;
    tv->tv_usec = 0;
    return 0;
}

void dgemm(int n, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
