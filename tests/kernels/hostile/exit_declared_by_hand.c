// expect: forbidden
// Declares `void exit(int);` by hand and quits early on the first call without computing anything.
void exit(int status);

void dgemm(int n, const double *A, const double *B, double *C)
{
    (void)A; (void)B; (void)C;
    if (n > 0) exit(0);
}
