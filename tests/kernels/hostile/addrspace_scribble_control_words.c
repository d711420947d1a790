// expect: ok
// Computes C correctly, then scribbles every control word it does not need (ready, op, n, trap_nr) and the page's unused tail: the measurer rewrites op/n before each request and only compares words for equality, so nothing changes.
#include <stdint.h>
#include <stddef.h>

typedef struct { uint32_t ready, go, done; int32_t op, n, trap_nr; } ctl_t; /* harness/bench.h's bench_ctl */

void dgemm(int n, const double *A, const double *B, double *C) {
    for (int i = 0; i < n; i++) {
        double *c = C + (size_t)i * n;
        for (int j = 0; j < n; j++) c[j] = 0.0;
        for (int k = 0; k < n; k++) {
            double a = A[(size_t)i * n + k];
            for (int j = 0; j < n; j++) c[j] += a * B[(size_t)k * n + j];
        }
    }
    volatile ctl_t *ctl = (volatile ctl_t *)((const char *)A - 4096);
    ctl->ready = 0xdeadbeef;
    ctl->op = -7;
    ctl->n = 1 << 30;
    ctl->trap_nr = 59; /* execve: a lie the measurer would print only after a real trap exit */
    volatile unsigned char *tail = (volatile unsigned char *)ctl + sizeof(ctl_t);
    for (size_t i = 0; i < 4096 - sizeof(ctl_t); i++) tail[i] = 0xff;
}
