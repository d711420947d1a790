// expect: forbidden
// Installs a SIGALRM/SIGXCPU/SIGSEGV handler via signal() (declared by hand) to dodge timeouts and crashes.
typedef void (*sighandler_t)(int);
sighandler_t signal(int signum, sighandler_t handler);

static void ignore(int sig) { (void)sig; }

void dgemm(int n, const double *A, const double *B, double *C)
{
    signal(14, ignore);  /* SIGALRM */
    signal(24, ignore);  /* SIGXCPU */
    signal(11, ignore);  /* SIGSEGV */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
