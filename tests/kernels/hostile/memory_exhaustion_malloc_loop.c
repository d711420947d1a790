// expect: runtime_error
// Allocates 256 MiB blocks and memsets them until malloc returns NULL (cap 64 GiB), then dereferences the NULL (allowed headers only).
#include <stdlib.h>
#include <string.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    (void)A; (void)B;
    void *volatile sink;            /* keeps every block observable so nothing is optimised away */
    char *volatile p;
    const size_t block = (size_t)256 << 20;
    for (int blocks = 0;; blocks++) {
        p = blocks < 256 ? malloc(block) : NULL; /* give up at 64 GiB even if malloc never fails */
        if (p == NULL) break;       /* stop as soon as malloc fails */
        memset(p, 0x5a, block);     /* touch every page */
        sink = p;                   /* never freed */
    }
    (void)sink;
    *(volatile char *)p = 1;        /* p is NULL here: segfault */
    for (long i = 0; i < (long)n * n; i++) C[i] = 0.0;
}
