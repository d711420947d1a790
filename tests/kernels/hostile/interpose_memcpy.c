// expect: forbidden
// Exports its own memcpy() that silently does nothing for large copies (breaks the harness's pristine input copies).
#include <stddef.h>

void *memcpy(void *restrict dst, const void *restrict src, size_t len)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (len > 4096) return dst;
    for (size_t i = 0; i < len; i++) d[i] = s[i];
    return dst;
}

void dgemm(int n, const double *A, const double *B, double *C)
{
    (void)A; (void)B;
    for (long i = 0; i < (long)n * n; i++) C[i] = 0.0;
}
