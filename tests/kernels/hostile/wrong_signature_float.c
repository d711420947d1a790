// expect: format_error
// Wrong signature: float pointers instead of double.
void dgemm(int n, const float *A, const float *B, float *C)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            float s = 0.0f;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
