// expect: forbidden
// Issues a raw `syscall` instruction from inline asm (getpid, nr 39 -- harmless, but asm + syscall).
void dgemm(int n, const double *A, const double *B, double *C)
{
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(39L) : "rcx", "r11", "memory");
    (void)ret;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
