// expect: format_error
// A .c file with nothing but comments and a blank preprocessor line: no function at all.
/*
 * TODO: implement dgemm(int n, const double *A, const double *B, double *C)
 * using blocking and AVX-512.
 */
#include <stddef.h>
