// expect: wrong_result
// Correct on the first call only; later calls fill C with a cheap plausible-looking guess (row sums of A times B[0][j]).
void dgemm(int n, const double *A, const double *B, double *C)
{
    static int warmed_up;
    if (warmed_up) {
        for (int i = 0; i < n; i++) {
            double r = 0.0;
            for (int k = 0; k < n; k++) r += A[i * n + k];
            for (int j = 0; j < n; j++) C[i * n + j] = r * B[j];
        }
        return;
    }
    warmed_up = 1;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
