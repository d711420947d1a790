// expect: forbidden
// Spelled differently: __attribute__ ((__constructor__(101))) and a destructor, both static.
static volatile int ran;

static void __attribute__ ((__constructor__(101))) early(void) { ran = 1; }
static void __attribute__ ((__destructor__)) late(void) { ran = 2; }

void dgemm(int n, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
