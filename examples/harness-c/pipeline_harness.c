/*
 * pipeline_harness: an exec harness (docs/kernel-authors/harness-protocol.md) that
 * declares a pipeline of its own, for quasimd's perturbation experiments:
 *
 *   thread t0:  mm_big   (matmul 320) ──────────────┐──> sum (reduce 2000000)
 *   thread t1:  mm_small (matmul 128) ──────────────┘ (joined)
 *
 * Two single-precision matrix multiplies of different sizes run on two
 * threads (pthreads); a reduction on the first thread waits for both. The
 * big matmul and the sum are the critical path; the small matmul has
 * several ms of slack. Tunable: the matmuls' loop order and block size
 * (the harness's own params, also tuned by quasimd through run requests),
 * and the sum's number of accumulators (a param of the stage's own).
 *
 * Build: cc -O3 -march=native -std=c99 -pthread -o pipeline_harness pipeline_harness.c
 *
 * Requests come from quasimd, whose JSON has no spaces and sorted map
 * keys, so a small key scanner is enough here.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BIG 320
#define SMALL 128
#define SUMN 2000000

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* num finds "key": in s and parses the number after it. */
static int num(const char *s, const char *key, double *out)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\":", key);
	const char *p = s ? strstr(s, pat) : NULL;
	if (!p)
		return -1;
	*out = strtod(p + strlen(pat), NULL);
	return 0;
}

/* object finds "key":{ in s and returns where its object starts. */
static const char *object(const char *s, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\":{", key);
	const char *p = strstr(s, pat);
	return p ? p + strlen(pat) - 1 : NULL;
}

/* C = A*B, n x n, blocked by bs, ijk or ikj inside a block. */
static void matmul(int n, const float *a, const float *b, float *c, int bs, int ikj)
{
	memset(c, 0, sizeof(float) * (size_t)n * n);
	for (int i0 = 0; i0 < n; i0 += bs)
		for (int k0 = 0; k0 < n; k0 += bs)
			for (int j0 = 0; j0 < n; j0 += bs) {
				int i1 = i0 + bs < n ? i0 + bs : n, j1 = j0 + bs < n ? j0 + bs : n, k1 = k0 + bs < n ? k0 + bs : n;
				for (int i = i0; i < i1; i++) {
					if (ikj) {
						for (int k = k0; k < k1; k++) {
							float x = a[(size_t)i * n + k];
							for (int j = j0; j < j1; j++)
								c[(size_t)i * n + j] += x * b[(size_t)k * n + j];
						}
					} else {
						for (int j = j0; j < j1; j++) {
							float s = c[(size_t)i * n + j];
							for (int k = k0; k < k1; k++)
								s += a[(size_t)i * n + k] * b[(size_t)k * n + j];
							c[(size_t)i * n + j] = s;
						}
					}
				}
			}
}

/* sum adds x[0..n) with lanes independent accumulators (1 to 8). */
static double sum(const float *x, long n, int lanes)
{
	float acc[8] = {0};
	long i = 0;
	for (; i + lanes <= n; i += lanes)
		for (int l = 0; l < lanes; l++)
			acc[l] += x[i + l];
	double s = 0;
	for (; i < n; i++)
		s += x[i];
	for (int l = 0; l < lanes; l++)
		s += acc[l];
	return s;
}

/*
 * delay waits at least d ns, asleep (a spin would take CPU time from the
 * other thread on a busy machine), and returns how long it waited: a sleep
 * wakes late, and quasimd predicts with the delay as it really was.
 */
static long long delay(long long d)
{
	long long t0 = now_ns();
	struct timespec ts = {d / 1000000000LL, d % 1000000000LL};
	while (nanosleep(&ts, &ts) != 0)
		;
	return now_ns() - t0;
}

static float *a, *b, *cbig, *csmall, *xs;

struct mmcfg {
	int bs, ikj;
};

/* mmcfg reads a matmul stage's config object (absent: the defaults). */
static struct mmcfg mmconfig(const char *obj)
{
	struct mmcfg c = {32, 1};
	double v;
	if (obj && num(obj, "block", &v) == 0)
		c.bs = (int)v;
	if (obj && strstr(obj, "\"order\":\"ijk\"") && (!strchr(obj, '}') || strstr(obj, "\"order\":\"ijk\"") < strchr(obj, '}')))
		c.ikj = 0;
	return c;
}

struct span {
	long long start, end, delayed;
};

struct side {
	struct mmcfg cfg;
	long long delay;
	struct span sp;
};

static void *run_small(void *arg)
{
	struct side *s = arg;
	s->sp.start = now_ns();
	matmul(SMALL, a, b, csmall, s->cfg.bs, s->cfg.ikj);
	s->sp.delayed = s->delay > 0 ? delay(s->delay) : 0;
	s->sp.end = now_ns();
	return NULL;
}

static void print_span(const char *name, struct span s, int comma)
{
	printf("{\"stage\":\"%s\",\"start_ns\":%lld,\"end_ns\":%lld", name, s.start, s.end);
	if (s.delayed > 0)
		printf(",\"delayed_ns\":%lld", s.delayed);
	printf("}%s", comma ? "," : "");
}

static void pipeline(const char *line, int id)
{
	const char *cfgs = object(line, "configs");
	struct mmcfg big = mmconfig(cfgs ? object(cfgs, "mm_big") : NULL);
	struct side side = {mmconfig(cfgs ? object(cfgs, "mm_small") : NULL), 0, {0, 0, 0}};
	double v;
	int lanes = 8;
	if (cfgs && num(object(cfgs, "sum"), "lanes", &v) == 0)
		lanes = (int)v;
	long long dbig = 0, dsum = 0;
	const char *dl = object(line, "delays_ns");
	if (dl) {
		if (num(dl, "mm_big", &v) == 0)
			dbig = (long long)v;
		if (num(dl, "mm_small", &v) == 0)
			side.delay = (long long)v;
		if (num(dl, "sum", &v) == 0)
			dsum = (long long)v;
	}
	pthread_t t;
	if (pthread_create(&t, NULL, run_small, &side) != 0) {
		printf("{\"type\":\"pipeline_result\",\"id\":%d,\"error\":\"pthread_create failed\"}\n", id);
		fflush(stdout);
		return;
	}
	struct span sb, ss;
	sb.start = now_ns();
	matmul(BIG, a, b, cbig, big.bs, big.ikj);
	sb.delayed = dbig > 0 ? delay(dbig) : 0;
	sb.end = now_ns();
	pthread_join(t, NULL);
	ss.start = now_ns();
	volatile double total = sum(xs, SUMN, lanes) + sum(cbig, (long)BIG * BIG, lanes) + sum(csmall, (long)SMALL * SMALL, lanes);
	(void)total;
	ss.delayed = dsum > 0 ? delay(dsum) : 0;
	ss.end = now_ns();
	printf("{\"type\":\"pipeline_result\",\"id\":%d,\"spans\":[", id);
	print_span("mm_big", sb, 1);
	print_span("mm_small", side.sp, 1);
	print_span("sum", ss, 0);
	printf("]}\n");
	fflush(stdout);
}

/* run measures one matmul alone, as a plain exec harness does. */
static void run(const char *line, int id)
{
	double n = 0, reps = 1;
	const char *p = strstr(line, "\"problem\":[");
	if (p)
		n = strtod(p + strlen("\"problem\":["), NULL);
	num(line, "repetitions", &reps);
	if (n < 1 || n > BIG) {
		printf("{\"type\":\"result\",\"id\":%d,\"error_class\":\"invalid\",\"error\":\"problem must be 1 to %d\"}\n", id, BIG);
		fflush(stdout);
		return;
	}
	struct mmcfg c = mmconfig(object(line, "config"));
	printf("{\"type\":\"result\",\"id\":%d,\"times_ms\":[", id);
	for (int r = 0; r < (int)reps; r++) {
		long long t0 = now_ns();
		matmul((int)n, a, b, cbig, c.bs, c.ikj);
		printf("%s%.6f", r ? "," : "", (now_ns() - t0) / 1e6);
	}
	printf("],\"checksum\":%.9g}\n", sum(cbig, (long)n * (long)n, 1));
	fflush(stdout);
}

int main(void)
{
	a = malloc(sizeof(float) * BIG * BIG);
	b = malloc(sizeof(float) * BIG * BIG);
	cbig = malloc(sizeof(float) * BIG * BIG);
	csmall = malloc(sizeof(float) * SMALL * SMALL);
	xs = malloc(sizeof(float) * SUMN);
	if (!a || !b || !cbig || !csmall || !xs)
		return 1;
	for (int i = 0; i < BIG * BIG; i++) {
		a[i] = (float)((i * 7) % 13) / 13.0f;
		b[i] = (float)((i * 5) % 11) / 11.0f;
	}
	for (long i = 0; i < SUMN; i++)
		xs[i] = (float)(i % 17) / 17.0f;
	printf("{\"type\":\"hello\",\"protocol\":1,\"name\":\"mm\",\"version\":\"1\","
	       "\"params\":[{\"name\":\"block\",\"values\":[8,16,32,64,128],\"default\":32},"
	       "{\"name\":\"order\",\"values\":[\"ijk\",\"ikj\"],\"default\":\"ikj\"}],"
	       "\"pipeline\":{\"name\":\"twomm\",\"stages\":["
	       "{\"name\":\"mm_big\",\"problem\":[%d],\"stream\":\"t0\"},"
	       "{\"name\":\"mm_small\",\"problem\":[%d],\"stream\":\"t1\"},"
	       "{\"name\":\"sum\",\"kernel\":\"reduce\",\"problem\":[%d],\"stream\":\"t0\",\"after\":[\"mm_small\"],"
	       "\"params\":[{\"name\":\"lanes\",\"values\":[2,4,8],\"default\":8}]}]}}\n",
	       BIG, SMALL, SUMN);
	fflush(stdout);
	static char line[1 << 16];
	while (fgets(line, sizeof line, stdin)) {
		double id = 0;
		num(line, "id", &id);
		if (strstr(line, "\"type\":\"shutdown\""))
			break;
		if (strstr(line, "\"type\":\"pipeline\""))
			pipeline(line, (int)id);
		else if (strstr(line, "\"type\":\"run\""))
			run(line, (int)id);
	}
	return 0;
}
