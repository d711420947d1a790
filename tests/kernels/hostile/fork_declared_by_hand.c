// expect: forbidden
// Declares fork/sleep/_exit by hand (no forbidden header) and leaves a child running for 20 s.
extern int fork(void);
extern unsigned int sleep(unsigned int seconds);
extern void _exit(int status);

void dgemm(int n, const double *A, const double *B, double *C)
{
    if (fork() == 0) {
        sleep(20);
        _exit(0);
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
