/*
 * matmul_harness: an exec harness (docs/kernel-authors/harness-protocol.md) for a blocked
 * single-precision matrix multiply C = A*B of n x n matrices on the CPU.
 * Tunable: the block sizes of the i, j and k loops and the loop order inside
 * a block: ijk or ikj, plain loops, or packed: panels of A and B copied into
 * contiguous buffers and multiplied by a register-blocked micro-kernel of
 * MR x NR accumulators (micro), written in plain C that gcc vectorises.
 * b_storage, a precision parameter (stage input), stores the packed panels
 * of B as fp32 or fp16 (_Float16, a GCC extension: converted to float in
 * the micro-kernel, with F16C's vcvtph2ps where -march has it): half the
 * bytes of B, at a unit roundoff of 2^-11 on each of its elements.
 * Build: cc -O3 -march=native -std=c99 -o matmul_harness matmul_harness.c
 *
 * It reads run requests on stdin and answers each with the times of the
 * repetitions and a checksum (the sum of C, in double), one JSON line each.
 * A verify run with "error_kind":"rel" also answers its accuracy: the
 * largest relative error of C against a float64 matmul of the same inputs,
 * and the a-priori bound of the config's precision (see accuracy()).
 * Requests come from quasimd, whose JSON has no spaces and sorted keys, so
 * a small key scanner is enough here; a production harness would use a real
 * JSON library.
 */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined __F16C__ || defined __AVX512F__
#include <immintrin.h>
#endif

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
__extension__ typedef _Float16 half; /* -pedantic: ISO C has no _Float16 */
static float apack[MAXB * MAXB + 64], bpack[MAXB * (MAXB + 32)];
static half bpack16[MAXB * (MAXB + 32)];

/*
 * tofloat_ copies a row of B's fp32 panel, tofloat__h widens one of the
 * fp16 panel (so both micro-kernels read B the same way; the copy costs the
 * fp32 path nothing measurable, but a memcpy here made gcc keep the
 * accumulators on the stack, at 2.4 times the time). gcc 12 vectorises neither a _Float16 to float cast nor the
 * reverse (a scalar vcvtph2ps an element made the fp16 path twice as slow
 * as fp32), so where the CPU has F16C (-march) they go 8 at a time, and
 * 16 with AVX-512 (whose 64-byte loads of bf are then forwarded from
 * stores of the same width, not from two 32-byte ones).
 */
static inline void tofloat_(float *restrict dst, const float *restrict src, int nr)
{
	int j = 0;
#ifdef __AVX512F__
	for (; j + 16 <= nr; j += 16)
		_mm512_storeu_ps(dst + j, _mm512_loadu_ps(src + j));
#endif
	for (; j < nr; j++)
		dst[j] = src[j];
}

static inline void tofloat__h(float *restrict dst, const half *restrict src, int nr)
{
	int j = 0;
#ifdef __AVX512F__
	for (; j + 16 <= nr; j += 16)
		_mm512_storeu_ps(dst + j, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(src + j))));
#endif
#ifdef __F16C__
	for (; j + 8 <= nr; j += 8)
		_mm256_storeu_ps(dst + j, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(src + j))));
#endif
	for (; j < nr; j++)
		dst[j] = (float)src[j];
}

/* MICRO(MR, NR, T, SUF) is the MR x NR micro-kernel reading B's panel as T. */
#define MICRO(MR, NR, T, SUF)                                                                \
	static void micro_##MR##x##NR##SUF(int kc, const float *restrict ap, const T *restrict bp, \
					   float *restrict c, int ldc, int mr, int nr)             \
	{                                                                                    \
		float acc[MR][NR];                                                           \
		memset(acc, 0, sizeof acc);                                                  \
		for (int p = 0; p < kc; p++) {                                               \
			const T *bq = bp + (size_t)p * NR;                                    \
			float bf[NR]; /* B's row, converted once for the MR rows */           \
			tofloat_##SUF(bf, bq, NR);                                            \
			for (int i = 0; i < MR; i++) {                                        \
				float x = ap[(size_t)p * MR + i];                             \
				for (int j = 0; j < NR; j++)                                  \
					acc[i][j] += x * bf[j];                               \
			}                                                                     \
		}                                                                             \
		for (int i = 0; i < mr; i++)                                                  \
			for (int j = 0; j < nr; j++)                                          \
				c[(size_t)i * ldc + j] += acc[i][j];                          \
	}
#define MICROS(T, SUF)          \
	MICRO(4, 16, T, SUF)    \
	MICRO(6, 16, T, SUF)    \
	MICRO(8, 16, T, SUF)    \
	MICRO(4, 32, T, SUF)    \
	MICRO(6, 32, T, SUF)    \
	MICRO(8, 32, T, SUF)
MICROS(float, )
MICROS(half, _h)

typedef void (*microfn)(int, const float *, const float *, float *, int, int, int);
typedef void (*microfn16)(int, const float *, const half *, float *, int, int, int);

/* tohalf rounds src[0:w] to fp16 (nearest even) into dst[0:nr],
 * zero-padded; 8 at a time with F16C, as tofloat__h. */
static void tohalf(half *dst, const float *src, int w, int nr)
{
	int j = 0;
#ifdef __F16C__
	for (; j + 8 <= w; j += 8)
		_mm_storeu_si128((__m128i *)(void *)(dst + j), _mm256_cvtps_ph(_mm256_loadu_ps(src + j), _MM_FROUND_TO_NEAREST_INT));
#endif
	for (; j < nr; j++)
		dst[j] = j < w ? (half)src[j] : 0;
}

/* packed multiplies with B's panels in fp32 (micro) or, where micro16 is
 * set, in fp16 (micro16). */
static void packed(int n, const float *a, const float *b, float *c, int bi, int bj, int bk, int mr, int nr, microfn micro,
		   microfn16 micro16)
{
	memset(c, 0, sizeof(float) * (size_t)n * (size_t)n);
	for (int j0 = 0; j0 < n; j0 += bj) {
		int nc = j0 + bj < n ? bj : n - j0;
		for (int k0 = 0; k0 < n; k0 += bk) {
			int kc = k0 + bk < n ? bk : n - k0;
			/* B[k0:k0+kc, j0:j0+nc] in panels of nr columns, kc rows each. */
			for (int jr = 0; jr < nc; jr += nr)
				for (int p = 0; p < kc; p++) {
					const float *src = b + (size_t)(k0 + p) * n + j0 + jr;
					size_t at = (size_t)jr * kc + (size_t)p * nr;
					int w = nc - jr < nr ? nc - jr : nr;
					if (micro16)
						tohalf(bpack16 + at, src, w, nr);
					else
						for (int j = 0; j < nr; j++)
							bpack[at + j] = j < w ? src[j] : 0;
				}
			for (int i0 = 0; i0 < n; i0 += bi) {
				int mc = i0 + bi < n ? bi : n - i0;
				/* A[i0:i0+mc, k0:k0+kc] in panels of mr rows. */
				for (int ir = 0; ir < mc; ir += mr)
					for (int p = 0; p < kc; p++)
						for (int i = 0; i < mr; i++)
							apack[(size_t)ir * kc + (size_t)p * mr + i] =
							    ir + i < mc ? a[(size_t)(i0 + ir + i) * n + k0 + p] : 0;
				for (int jr = 0; jr < nc; jr += nr)
					for (int ir = 0; ir < mc; ir += mr) {
						float *cc = c + (size_t)(i0 + ir) * n + j0 + jr;
						int m1 = mc - ir < mr ? mc - ir : mr, n1 = nc - jr < nr ? nc - jr : nr;
						if (micro16)
							micro16(kc, apack + (size_t)ir * kc, bpack16 + (size_t)jr * kc, cc, n, m1, n1);
						else
							micro(kc, apack + (size_t)ir * kc, bpack + (size_t)jr * kc, cc, n, m1, n1);
					}
			}
		}
	}
}

/*
 * accuracy compares C with a float64 matmul of the same inputs and prints
 * the "accuracy" member of a verify answer, in quasim's rel units: an
 * element's error over max(|ref|, the mean |ref| of C, FLT_MIN). The
 * a-priori bound at element (i, j) is (u_b + gamma_n (1 + u_b) + gamma_n')
 * sum_k |a_ik||b_kj|: B's storage rounds each b_kj by at most u_b (0 for
 * fp32, 2^-11 for fp16: the inputs are normal in both), each of the n
 * float32 products and sums along any summation order rounds once
 * (gamma_n = n u / (1 - n u), u = 2^-24, Higham, Accuracy and Stability,
 * 3.5), and gamma_n' (u = 2^-53) is the reference's own error.
 */
/* No libm: the harness links with the C library alone. */
static double dabs(double x) { return x < 0 ? -x : x; }
static double dmax(double x, double y) { return x > y ? x : y; }

static int accuracy(int n, const float *a, const float *b, const float *c, double ub)
{
	size_t m = (size_t)n * (size_t)n;
	double *ref = calloc(m, sizeof(double)), *abs_ = calloc(m, sizeof(double));
	if (!ref || !abs_) {
		free(ref), free(abs_);
		return -1;
	}
	for (int i = 0; i < n; i++)
		for (int k = 0; k < n; k++) {
			double x = a[(size_t)i * n + k];
			for (int j = 0; j < n; j++) {
				double y = b[(size_t)k * n + j];
				ref[(size_t)i * n + j] += x * y;
				abs_[(size_t)i * n + j] += dabs(x * y);
			}
		}
	double mean = 0;
	for (size_t i = 0; i < m; i++)
		mean += dabs(ref[i]);
	mean /= (double)m;
	double u = 0x1p-24, ud = 0x1p-53;
	double gn = n * u / (1 - n * u), gd = n * ud / (1 - n * ud);
	double coef = ub + gn * (1 + ub) + gd, measured = 0, bound = 0, sb = 0, sa = 0;
	for (size_t i = 0; i < m; i++) {
		double den = dmax(dmax(dabs(ref[i]), mean), FLT_MIN);
		double e = dabs((double)c[i] - ref[i]) / den, bd = coef * abs_[i] / den;
		if (e > measured)
			measured = e;
		if (bd > bound)
			bound = bd, sb = ub * abs_[i] / den, sa = (gn * (1 + ub) + gd) * abs_[i] / den;
	}
	free(ref), free(abs_);
	printf(",\"accuracy\":{\"kind\":\"rel\",\"measured\":%.17g,\"bound\":%.17g,"
	       "\"reference\":\"float64 matmul of the same inputs\",\"stages\":["
	       "{\"stage\":\"input\",\"param\":\"b_storage\",\"value\":\"%s\",\"bound\":%.17g,\"formula\":\"u_b sum|a||b|, u_b=%g\"},"
	       "{\"stage\":\"accumulation\",\"value\":\"fp32\",\"bound\":%.17g,\"formula\":\"(gamma_n (1+u_b) + gamma_n(2^-53)) sum|a||b|, n=%d, u=2^-24\"}]}",
	       measured, bound, ub > 0 ? "fp16" : "fp32", sb, ub, sa, n);
	return 0;
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
	       "{\"name\":\"micro\",\"values\":[\"4x16\",\"6x16\",\"8x16\",\"4x32\",\"6x32\",\"8x32\"],\"default\":\"4x16\"},"
	       "{\"name\":\"b_storage\",\"values\":[\"fp32\",\"fp16\"],\"default\":\"fp32\",\"precision\":\"input\"}],"
	       "\"constraints\":[\"order == 'packed' or block_i * block_k <= 8192\","
	       "\"order == 'packed' or micro == '4x16'\","
	       "\"order == 'packed' or b_storage == 'fp32'\"]}\n");
	char line[1 << 16];
	float *a = NULL, *b = NULL, *c = NULL;
	int cur = 0;
	while (fgets(line, sizeof line, stdin)) {
		char type[32] = "";
		str(line, "type", type, sizeof type);
		if (!strcmp(type, "shutdown"))
			break;
		double id = 0, bi = 8, bj = 8, bk = 8, reps = 1, n = 0;
		char order[8] = "ijk", mic[8] = "4x16", bs[8] = "fp32", ek[8] = "";
		num(line, "id", &id);
		num(line, "block_i", &bi);
		num(line, "block_j", &bj);
		num(line, "block_k", &bk);
		num(line, "repetitions", &reps);
		str(line, "order", order, sizeof order);
		str(line, "micro", mic, sizeof mic);
		str(line, "b_storage", bs, sizeof bs);
		str(line, "error_kind", ek, sizeof ek);
		int fp16 = !strcmp(bs, "fp16");
		if (fp16 && strcmp(order, "packed")) {
			printf("{\"type\":\"result\",\"id\":%.0f,\"error_class\":\"invalid\",\"error\":\"b_storage fp16 needs order packed\"}\n", id);
			continue;
		}
		int mr = 4, nr = 16;
		microfn micro = micro_4x16;
		microfn16 micro16 = micro_4x16_h;
		if (!strcmp(mic, "6x16"))
			mr = 6, micro = micro_6x16, micro16 = micro_6x16_h;
		else if (!strcmp(mic, "8x16"))
			mr = 8, micro = micro_8x16, micro16 = micro_8x16_h;
		else if (!strcmp(mic, "4x32"))
			nr = 32, micro = micro_4x32, micro16 = micro_4x32_h;
		else if (!strcmp(mic, "6x32"))
			mr = 6, nr = 32, micro = micro_6x32, micro16 = micro_6x32_h;
		else if (!strcmp(mic, "8x32"))
			mr = 8, nr = 32, micro = micro_8x32, micro16 = micro_8x32_h;
		if (!fp16)
			micro16 = NULL;
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
				packed(cur, a, b, c, (int)bi, (int)bj, (int)bk, mr, nr, micro, micro16);
			else
				matmul(cur, a, b, c, (int)bi, (int)bj, (int)bk, !strcmp(order, "ikj"));
			printf("%s%.6f", i ? "," : "", now_ms() - t0);
		}
		double sum = 0;
		for (size_t i = 0; i < (size_t)cur * (size_t)cur; i++)
			sum += c[i];
		printf("],\"checksum\":%.17g", sum);
		/* Only rel is measured here: asked for another kind, the answer has
		 * no accuracy, and quasimd certifies nothing under that budget. */
		if (!strcmp(ek, "rel") && accuracy(cur, a, b, c, fp16 ? 0x1p-11 : 0) != 0) {
			printf(",\"accuracy\":null");
		}
		printf("}\n");
	}
	free(a), free(b), free(c);
	return 0;
}
