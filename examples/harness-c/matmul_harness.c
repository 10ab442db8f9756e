/*
 * matmul_harness: an exec harness (docs/harness-protocol.md) for a blocked
 * single-precision matrix multiply C = A*B of n x n matrices on the CPU.
 * Tunable: the block sizes of the i, j and k loops and the loop order inside
 * a block: ijk or ikj, plain loops, or packed: panels of A and B copied into
 * contiguous buffers and multiplied by a register-blocked micro-kernel of
 * MR x NR accumulators (micro), written in plain C that gcc vectorises.
 * Build: cc -O3 -march=native -std=c99 -o matmul_harness matmul_harness.c
 *
 * It reads run requests on stdin and answers each with the times of the
 * repetitions and a checksum (the sum of C, in double), one JSON line each.
 * Requests come from quasimd, whose JSON has no spaces and sorted keys, so
 * a small key scanner is enough here; a production harness would use a real
 * JSON library.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* num finds "key": in line and parses the number after it. */
static int num(const char *line, const char *key, double *out)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\":", key);
	const char *p = strstr(line, pat);
	if (!p)
		return -1;
	*out = strtod(p + strlen(pat), NULL);
	return 0;
}

/* str finds "key":"value" in line and copies the value. */
static int str(const char *line, const char *key, char *out, size_t cap)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\":\"", key);
	const char *p = strstr(line, pat);
	if (!p)
		return -1;
	p += strlen(pat);
	size_t n = 0;
	while (p[n] && p[n] != '"' && n + 1 < cap)
		n++;
	memcpy(out, p, n);
	out[n] = 0;
	return 0;
}

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void matmul(int n, const float *a, const float *b, float *c, int bi, int bj, int bk, int ikj)
{
	memset(c, 0, sizeof(float) * (size_t)n * (size_t)n);
	for (int i0 = 0; i0 < n; i0 += bi)
		for (int k0 = 0; k0 < n; k0 += bk)
			for (int j0 = 0; j0 < n; j0 += bj) {
				int i1 = i0 + bi < n ? i0 + bi : n;
				int j1 = j0 + bj < n ? j0 + bj : n;
				int k1 = k0 + bk < n ? k0 + bk : n;
				if (ikj) {
					for (int i = i0; i < i1; i++)
						for (int k = k0; k < k1; k++) {
							float x = a[(size_t)i * n + k];
							for (int j = j0; j < j1; j++)
								c[(size_t)i * n + j] += x * b[(size_t)k * n + j];
						}
				} else {
					for (int i = i0; i < i1; i++)
						for (int j = j0; j < j1; j++) {
							float s = c[(size_t)i * n + j];
							for (int k = k0; k < k1; k++)
								s += a[(size_t)i * n + k] * b[(size_t)k * n + j];
							c[(size_t)i * n + j] = s;
						}
				}
			}
}

/*
 * The packed path, after Goto and van de Geijn ("Anatomy of high-performance
 * matrix multiplication", 2008): for each block_j x block_k panel of B and
 * block_i x block_k panel of A, copy them in the order the micro-kernel
 * reads (NR columns, MR rows at a time, zero-padded), then let the
 * micro-kernel keep an MR x NR block of C in registers over the whole k
 * panel. Block sizes are capped by MAXB.
 */
#define MAXB 256
static float apack[MAXB * MAXB + 64], bpack[MAXB * (MAXB + 32)];

#define MICRO(MR, NR)                                                                        \
	static void micro_##MR##x##NR(int kc, const float *restrict ap, const float *restrict bp, \
				      float *restrict c, int ldc, int mr, int nr)                  \
	{                                                                                    \
		float acc[MR][NR];                                                           \
		memset(acc, 0, sizeof acc);                                                  \
		for (int p = 0; p < kc; p++) {                                               \
			const float *bq = bp + (size_t)p * NR;                                \
			for (int i = 0; i < MR; i++) {                                        \
				float x = ap[(size_t)p * MR + i];                             \
				for (int j = 0; j < NR; j++)                                  \
					acc[i][j] += x * bq[j];                               \
			}                                                                     \
		}                                                                             \
		for (int i = 0; i < mr; i++)                                                  \
			for (int j = 0; j < nr; j++)                                          \
				c[(size_t)i * ldc + j] += acc[i][j];                          \
	}
MICRO(4, 16)
MICRO(6, 16)
MICRO(8, 16)
MICRO(4, 32)
MICRO(6, 32)
MICRO(8, 32)

typedef void (*microfn)(int, const float *, const float *, float *, int, int, int);

static void packed(int n, const float *a, const float *b, float *c, int bi, int bj, int bk, int mr, int nr, microfn micro)
{
	memset(c, 0, sizeof(float) * (size_t)n * (size_t)n);
	for (int j0 = 0; j0 < n; j0 += bj) {
		int nc = j0 + bj < n ? bj : n - j0;
		for (int k0 = 0; k0 < n; k0 += bk) {
			int kc = k0 + bk < n ? bk : n - k0;
			/* B[k0:k0+kc, j0:j0+nc] in panels of nr columns, kc rows each. */
			for (int jr = 0; jr < nc; jr += nr)
				for (int p = 0; p < kc; p++)
					for (int j = 0; j < nr; j++)
						bpack[(size_t)jr * kc + (size_t)p * nr + j] =
						    jr + j < nc ? b[(size_t)(k0 + p) * n + j0 + jr + j] : 0;
			for (int i0 = 0; i0 < n; i0 += bi) {
				int mc = i0 + bi < n ? bi : n - i0;
				/* A[i0:i0+mc, k0:k0+kc] in panels of mr rows. */
				for (int ir = 0; ir < mc; ir += mr)
					for (int p = 0; p < kc; p++)
						for (int i = 0; i < mr; i++)
							apack[(size_t)ir * kc + (size_t)p * mr + i] =
							    ir + i < mc ? a[(size_t)(i0 + ir + i) * n + k0 + p] : 0;
				for (int jr = 0; jr < nc; jr += nr)
					for (int ir = 0; ir < mc; ir += mr)
						micro(kc, apack + (size_t)ir * kc, bpack + (size_t)jr * kc,
						      c + (size_t)(i0 + ir) * n + j0 + jr, n,
						      mc - ir < mr ? mc - ir : mr, nc - jr < nr ? nc - jr : nr);
			}
		}
	}
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("{\"type\":\"hello\",\"protocol\":1,\"name\":\"matmul-c\",\"version\":\"1\","
	       "\"params\":["
	       "{\"name\":\"block_i\",\"values\":[8,16,32,64,128,256],\"default\":8},"
	       "{\"name\":\"block_j\",\"values\":[8,16,32,64,128,256],\"default\":8},"
	       "{\"name\":\"block_k\",\"values\":[8,16,32,64,128,256],\"default\":8},"
	       "{\"name\":\"order\",\"values\":[\"ijk\",\"ikj\",\"packed\"],\"default\":\"ijk\"},"
	       "{\"name\":\"micro\",\"values\":[\"4x16\",\"6x16\",\"8x16\",\"4x32\",\"6x32\",\"8x32\"],\"default\":\"4x16\"}],"
	       "\"constraints\":[\"order == 'packed' or block_i * block_k <= 8192\","
	       "\"order == 'packed' or micro == '4x16'\"]}\n");
	char line[1 << 16];
	float *a = NULL, *b = NULL, *c = NULL;
	int cur = 0;
	while (fgets(line, sizeof line, stdin)) {
		char type[32] = "";
		str(line, "type", type, sizeof type);
		if (!strcmp(type, "shutdown"))
			break;
		double id = 0, bi = 8, bj = 8, bk = 8, reps = 1, n = 0;
		char order[8] = "ijk", mic[8] = "4x16";
		num(line, "id", &id);
		num(line, "block_i", &bi);
		num(line, "block_j", &bj);
		num(line, "block_k", &bk);
		num(line, "repetitions", &reps);
		str(line, "order", order, sizeof order);
		str(line, "micro", mic, sizeof mic);
		int mr = 4, nr = 16;
		microfn micro = micro_4x16;
		if (!strcmp(mic, "6x16"))
			mr = 6, micro = micro_6x16;
		else if (!strcmp(mic, "8x16"))
			mr = 8, micro = micro_8x16;
		else if (!strcmp(mic, "4x32"))
			nr = 32, micro = micro_4x32;
		else if (!strcmp(mic, "6x32"))
			mr = 6, nr = 32, micro = micro_6x32;
		else if (!strcmp(mic, "8x32"))
			mr = 8, nr = 32, micro = micro_8x32;
		if (bi < 1 || bj < 1 || bk < 1 || bi > MAXB || bj > MAXB || bk > MAXB) {
			printf("{\"type\":\"result\",\"id\":%.0f,\"error_class\":\"invalid\",\"error\":\"block sizes outside 1..%d\"}\n", id, MAXB);
			continue;
		}
		const char *pr = strstr(line, "\"problem\":[");
		if (pr)
			n = strtod(pr + 11, NULL);
		if (n < 1 || n > 4096) {
			printf("{\"type\":\"result\",\"id\":%.0f,\"error_class\":\"invalid\",\"error\":\"problem %g outside 1..4096\"}\n", id, n);
			continue;
		}
		if ((int)n != cur) {
			cur = (int)n;
			free(a), free(b), free(c);
			size_t m = (size_t)cur * (size_t)cur;
			a = malloc(sizeof(float) * m), b = malloc(sizeof(float) * m), c = malloc(sizeof(float) * m);
			if (!a || !b || !c) {
				printf("{\"type\":\"result\",\"id\":%.0f,\"error_class\":\"runtime\",\"error\":\"out of memory\"}\n", id);
				cur = 0;
				continue;
			}
			unsigned x = 12345;
			for (size_t i = 0; i < m; i++) {
				x = x * 1103515245u + 12345u;
				a[i] = (float)((x >> 8) % 1000) / 1000.0f - 0.5f;
				x = x * 1103515245u + 12345u;
				b[i] = (float)((x >> 8) % 1000) / 1000.0f - 0.5f;
			}
		}
		int r = reps < 1 ? 1 : (int)reps;
		printf("{\"type\":\"result\",\"id\":%.0f,\"times_ms\":[", id);
		for (int i = 0; i < r; i++) {
			double t0 = now_ms();
			if (!strcmp(order, "packed"))
				packed(cur, a, b, c, (int)bi, (int)bj, (int)bk, mr, nr, micro);
			else
				matmul(cur, a, b, c, (int)bi, (int)bj, (int)bk, !strcmp(order, "ikj"));
			printf("%s%.6f", i ? "," : "", now_ms() - t0);
		}
		double sum = 0;
		for (size_t i = 0; i < (size_t)cur * (size_t)cur; i++)
			sum += c[i];
		printf("],\"checksum\":%.17g}\n", sum);
	}
	free(a), free(b), free(c);
	return 0;
}
