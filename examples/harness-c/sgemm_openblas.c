/*
 * sgemm_openblas: the yardstick for matmul_harness. Times OpenBLAS's
 * cblas_sgemm on the same n x n inputs as the harness (same generator) and
 * prints one line per size: n, best and median time of the repetitions in
 * ms, and GFLOP/s at the best. Single-threaded unless OPENBLAS_NUM_THREADS
 * says otherwise, as the harness is.
 * Build: cc -O2 -std=c99 -o sgemm_openblas sgemm_openblas.c -lopenblas
 * (Debian: libopenblas-dev). Run: ./sgemm_openblas 256 512 1024
 */
#define _POSIX_C_SOURCE 200809L
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: sgemm_openblas N...\n");
		return 2;
	}
	printf("# %s\n", openblas_get_config());
	for (int ai = 1; ai < argc; ai++) {
		int n = atoi(argv[ai]);
		if (n < 1 || n > 8192) {
			fprintf(stderr, "size %s outside 1..8192\n", argv[ai]);
			return 2;
		}
		size_t m = (size_t)n * (size_t)n;
		float *a = malloc(sizeof(float) * m), *b = malloc(sizeof(float) * m), *c = malloc(sizeof(float) * m);
		if (!a || !b || !c)
			return 1;
		unsigned x = 12345;
		for (size_t i = 0; i < m; i++) {
			x = x * 1103515245u + 12345u;
			a[i] = (float)((x >> 8) % 1000) / 1000.0f - 0.5f;
			x = x * 1103515245u + 12345u;
			b[i] = (float)((x >> 8) % 1000) / 1000.0f - 0.5f;
		}
		enum { reps = 21 };
		double t[reps];
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a, n, b, n, 0, c, n); /* warm-up */
		for (int r = 0; r < reps; r++) {
			double t0 = now_ms();
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a, n, b, n, 0, c, n);
			t[r] = now_ms() - t0;
		}
		qsort(t, reps, sizeof t[0], cmp);
		double sum = 0;
		for (size_t i = 0; i < m; i++)
			sum += c[i];
		printf("%d %.4f %.4f %.1f checksum %.6g\n", n, t[0], t[reps / 2], 2.0 * n * n * (double)n / t[0] / 1e6, sum);
		free(a), free(b), free(c);
	}
	return 0;
}
