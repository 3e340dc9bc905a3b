/* One core's peak rate of f64 multiply-adds with AVX2 (four lanes per instruction): twelve
 * independent chains, enough to cover the FMA latency on both FMA pipes. The floor under a
 * matrix product of known size (see README, Tensor MLP). Five rounds of 20 M steps each.
 *
 *   gcc -O3 -mavx2 -mfma benches/peak_fma.c -o /tmp/peak_fma && /tmp/peak_fma
 */
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(void) {
    enum { CHAINS = 12 };
    const long steps = 20000000L;
    __m256d acc[CHAINS];
    const __m256d m = _mm256_set1_pd(0.999999), c = _mm256_set1_pd(1e-7);
    for (int i = 0; i < CHAINS; i++) acc[i] = _mm256_set1_pd(i);
    for (int round = 0; round < 5; round++) {
        double t0 = now();
        for (long s = 0; s < steps; s++)
            for (int i = 0; i < CHAINS; i++) acc[i] = _mm256_fmadd_pd(acc[i], m, c);
        double t = now() - t0;
        double sum = 0, lanes[4];
        for (int i = 0; i < CHAINS; i++) {
            _mm256_storeu_pd(lanes, acc[i]);
            sum += lanes[0];
        }
        /* The sum keeps the chains live; it is printed so that nothing is optimised away. */
        printf("%.2f G f64 multiply-adds/s (%.3f s, checksum %g)\n",
               (double)steps * CHAINS * 4 / t / 1e9, t, sum);
    }
    return 0;
}
