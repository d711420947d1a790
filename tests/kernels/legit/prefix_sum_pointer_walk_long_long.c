// expect: ok problem: prefix_sum
// Chat-answer style: long long running sum, restrict pointers walked to an end pointer, a duff-like 8-way unrolled body and a switch for the remainder.
#include <stddef.h>
#include <stdint.h>

void prefix_sum(int n, const int64_t *restrict x, int64_t *restrict y)
{
    const int64_t *p = x, *end8 = x + (n & ~7), *end = x + n;
    int64_t *q = y;
    long long s = 0;
    while (p < end8) {
        s += p[0]; q[0] = s;
        s += p[1]; q[1] = s;
        s += p[2]; q[2] = s;
        s += p[3]; q[3] = s;
        s += p[4]; q[4] = s;
        s += p[5]; q[5] = s;
        s += p[6]; q[6] = s;
        s += p[7]; q[7] = s;
        p += 8;
        q += 8;
    }
    switch (end - p) {
    case 7: s += *p++; *q++ = s; /* fall through */
    case 6: s += *p++; *q++ = s; /* fall through */
    case 5: s += *p++; *q++ = s; /* fall through */
    case 4: s += *p++; *q++ = s; /* fall through */
    case 3: s += *p++; *q++ = s; /* fall through */
    case 2: s += *p++; *q++ = s; /* fall through */
    case 1: s += *p++; *q++ = s; /* fall through */
    default: break;
    }
}
