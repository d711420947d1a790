// expect: forbidden
// Declares `int puts(const char*);` by hand (no stdio.h) and prints a fake result line.
int puts(const char *s);

void dgemm(int n, const double *A, const double *B, double *C)
{
    puts("gflops 9999");
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
