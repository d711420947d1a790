// expect: forbidden
// Opens a TCP socket and connects to 127.0.0.1:9 (discard) to exfiltrate the inputs.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s >= 0) {
        struct sockaddr_in addr = {0};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(9);
        addr.sin_addr.s_addr = htonl(0x7f000001); /* 127.0.0.1 */
        if (connect(s, (struct sockaddr *)&addr, sizeof addr) == 0)
            send(s, A, sizeof(double) * (size_t)n, 0);
        close(s);
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double sum = 0.0;
            for (int k = 0; k < n; k++) sum += A[i * n + k] * B[k * n + j];
            C[i * n + j] = sum;
        }
}
