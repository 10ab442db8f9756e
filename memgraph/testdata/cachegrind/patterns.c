/*
 * patterns: the access patterns memgraph's cachegrind test checks its miss
 * estimate against (memgraph/locality_cachegrind_test.go). Each pattern is
 * a noinline function named kern_* that walks float tensors placed in one
 * arena at the byte offsets memgraph's plan gave, passed on the command
 * line; the test counts only the kern_* functions' misses, so start-up
 * and argument parsing do not count. Built with gcc -O1: no
 * vectorisation, loop indices in registers, one load or store per
 * element access in the source.
 *
 *   patterns scan2 N OFF_X                 sum x[0..N) twice
 *   patterns copy N OFF_X OFF_Y            y[i] = x[i] + 1
 *   patterns column N OFF_A                sum a[i][j] column by column (N x N)
 *   patterns transpose N OFF_A OFF_B       b[j][i] = a[i][j], i outer
 *   patterns matmul N B OFF_A OFF_B OFF_C  c += a * b, blocked ikj, B x B x B blocks
 *   patterns chain N OFF_T0 OFF_T1 OFF_T2 OFF_T3
 *                                          t1 = 2 t0; t2 = t1 + 1; t3 = t2 * t2
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

static volatile float sink;

static NOINLINE void kern_scan2(const float *x, long n)
{
	float s = 0;
	for (int p = 0; p < 2; p++)
		for (long i = 0; i < n; i++)
			s += x[i];
	sink = s;
}

static NOINLINE void kern_copy(const float *x, float *y, long n)
{
	for (long i = 0; i < n; i++)
		y[i] = x[i] + 1.0f;
}

static NOINLINE void kern_column(const float *a, long n)
{
	float s = 0;
	for (long j = 0; j < n; j++)
		for (long i = 0; i < n; i++)
			s += a[i * n + j];
	sink = s;
}

static NOINLINE void kern_transpose(const float *a, float *b, long n)
{
	for (long i = 0; i < n; i++)
		for (long j = 0; j < n; j++)
			b[j * n + i] = a[i * n + j];
}

static NOINLINE void kern_matmul(const float *a, const float *b, float *c, long n, long bs)
{
	for (long i0 = 0; i0 < n; i0 += bs)
		for (long k0 = 0; k0 < n; k0 += bs)
			for (long j0 = 0; j0 < n; j0 += bs)
				for (long i = i0; i < i0 + bs; i++)
					for (long k = k0; k < k0 + bs; k++) {
						float x = a[i * n + k];
						for (long j = j0; j < j0 + bs; j++)
							c[i * n + j] += x * b[k * n + j];
					}
}

static NOINLINE void kern_chain(const float *t0, float *t1, float *t2, float *t3, long n)
{
	for (long i = 0; i < n; i++)
		t1[i] = 2.0f * t0[i];
	for (long i = 0; i < n; i++)
		t2[i] = t1[i] + 1.0f;
	for (long i = 0; i < n; i++)
		t3[i] = t2[i] * t2[i];
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: patterns PATTERN N ... (see the comment at the top)\n");
		return 2;
	}
	const char *pat = argv[1];
	long n = atol(argv[2]);
	long off[5] = {0};
	long top = 0;
	for (int i = 3; i < argc && i < 8; i++) {
		off[i - 3] = atol(argv[i]);
		if (off[i - 3] > top)
			top = off[i - 3];
	}
	/* Offsets come from the plan; the arena must hold the last tensor. The
	 * base is 2 MiB aligned so that cache sets match offsets from 0. */
	int matrix = !strcmp(pat, "column") || !strcmp(pat, "transpose") || !strcmp(pat, "matmul");
	size_t bytes = (size_t)n * (matrix ? (size_t)n : 1) * sizeof(float);
	size_t size = ((size_t)top + bytes + (2u << 20)) & ~(size_t)((2u << 20) - 1);
	char *arena = aligned_alloc(2u << 20, size);
	if (!arena) {
		perror("aligned_alloc");
		return 1;
	}
#define T(k) ((float *)(arena + off[k]))
	if (!strcmp(pat, "scan2"))
		kern_scan2(T(0), n);
	else if (!strcmp(pat, "copy"))
		kern_copy(T(0), T(1), n);
	else if (!strcmp(pat, "column"))
		kern_column(T(0), n);
	else if (!strcmp(pat, "transpose"))
		kern_transpose(T(0), T(1), n);
	else if (!strcmp(pat, "matmul"))
		kern_matmul(T(1), T(2), T(3), n, off[0]);
	else if (!strcmp(pat, "chain"))
		kern_chain(T(0), T(1), T(2), T(3), n);
	else {
		fprintf(stderr, "patterns: unknown pattern %s\n", pat);
		return 2;
	}
	return 0;
}
