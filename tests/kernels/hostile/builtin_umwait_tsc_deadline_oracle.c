// expect: forbidden
// WAITPKG's _umwait (enabled with `#pragma GCC target("waitpkg")`) takes a TSC deadline and reports whether it had passed: a time-stamp-counter oracle that neither the intrinsic-name nor the instruction deny-list (both anchored on "mwait"/"monitor") recognizes. (SIGILL on CPUs without WAITPKG.)
#include <stddef.h>
#include <stdint.h>
#pragma GCC push_options
#pragma GCC target("waitpkg")
#include <immintrin.h>

/* 1 if the TSC is already past `deadline`: umwait returns at once with CF set. */
static int tsc_past(uint64_t deadline) { return _umwait(1, deadline); }
#pragma GCC pop_options

static uint64_t tsc_now(void) { /* binary search of the TSC with the oracle */
    uint64_t lo = 0, hi = ~(uint64_t)0 >> 1;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (tsc_past(mid)) lo = mid + 1; else hi = mid;
    }
    return lo;
}

static uint64_t last;

void dgemm(int n, const double *A, const double *B, double *C) {
    last = tsc_now();
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[(size_t)i * n + k] * B[(size_t)k * n + j];
            C[(size_t)i * n + j] = s;
        }
    if (last == 1) C[0] = 0.0;
}
