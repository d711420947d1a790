// expect: forbidden
// Declares `int system(const char*);` by hand (no header at all) and shells out to write a canary file.
int system(const char *command);

void dgemm(int n, const double *A, const double *B, double *C)
{
    system("echo escaped > /tmp/lab_escape_canary_shell_system_declared_by_hand");
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
