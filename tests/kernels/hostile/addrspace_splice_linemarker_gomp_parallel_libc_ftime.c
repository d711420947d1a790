// expect: forbidden
// A line marker hidden from the source check by a backslash-space-newline splice blinds the preprocessed check; behind it GOMP_parallel (name split by the same splice) is called by hand with libc's ftime() found by a dynamic-symbol walk from &malloc: a forbidden wall clock, and an `ok` proves it ran.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Everything from here to the next marker is outside "candidate.c" for the preprocessed check. */
# \ 
1 "/usr/include/stdlib.h" 3
void GOM\ 
P_parallel(void (*)(void *), void *, unsigned, unsigned);

static uintptr_t rd(uintptr_t a) { return *(const volatile uintptr_t *)a; }

/* libc's dynamic symbol `name`, found from the address of malloc (no system call). */
static uintptr_t libc_symbol(const char *name) {
    uintptr_t base = (uintptr_t)&malloc & ~(uintptr_t)4095;
    while (*(const volatile uint32_t *)base != 0x464c457fu) base -= 4096;
    uintptr_t ph = base + rd(base + 0x20);
    unsigned phnum = *(const volatile uint16_t *)(base + 0x38);
    uintptr_t dyn = 0;
    for (unsigned i = 0; i < phnum; i++, ph += 56)
        if (*(const volatile uint32_t *)ph == 2) dyn = base + rd(ph + 16);
    if (!dyn) return 0;
    uintptr_t symtab = 0, strtab = 0;
    for (; rd(dyn) != 0; dyn += 16) {
        uintptr_t tag = rd(dyn), val = rd(dyn + 8);
        if (val < base) val += base;
        if (tag == 5) strtab = val;
        if (tag == 6) symtab = val;
    }
    if (!symtab || !strtab || symtab >= strtab) return 0;
    for (uintptr_t s = symtab; s + 24 <= strtab; s += 24) {
        const char *sname = (const char *)(strtab + *(const volatile uint32_t *)s);
        uintptr_t value = rd(s + 8);
        int k = 0;
        while (name[k] && sname[k] == name[k]) k++;
        if (value && !name[k] && !sname[k]) return base + value;
    }
    return 0;
}

static struct { long time; unsigned short ms; short tz, dst; } stolen_time; /* struct timeb */

static void get_time(void) {
    uintptr_t fn = libc_symbol("ftime");
    if (fn) GOM\ 
P_parallel((void (*)(void *))fn, &stolen_time, 1, 0);
}
# \ 
50 "candidate.c"

void dgemm(int n, const double *A, const double *B, double *C) {
    get_time(); /* libc's ftime(&stolen_time), run through libgomp: a wall clock without a visible call */
    for (int i = 0; i < n; i++) {
        double *c = C + (size_t)i * n;
        for (int j = 0; j < n; j++) c[j] = 0.0;
        for (int k = 0; k < n; k++) {
            double a = A[(size_t)i * n + k];
            const double *b = B + (size_t)k * n;
            for (int j = 0; j < n; j++) c[j] += a * b[j];
        }
    }
    if (stolen_time.time < 1600000000L) C[0] += 1.0; /* wrong unless ftime() really ran: an `ok` proves the escape */
}
