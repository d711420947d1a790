// expect: forbidden
// Hides `__asm__` behind a token-pasting macro (#define A(x) __as##x) so the word never appears literally.
#define A_(x) __as##x
#define BARRIER() A_(m__)(" nop" ::: "memory")

void dgemm(int n, const double *A, const double *B, double *C)
{
    BARRIER();
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
