/* test_quasim: the C client against a running quasimd that serves a
 * certified config of kernel "reduce" at problem 65536.
 * usage: test_quasim SOCKET; an empty SOCKET makes the client find it
 * (quasim_open(NULL, ...)). QUASIM_TEST_LOAD_FACTOR (default 1), the
 * caller's measure of how busy the machine is, scales the time limits. */
#define _POSIX_C_SOURCE 200809L
#include "quasim.h"
#include "test_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void count(const char *reason, void *arg)
{
	(void)reason;
	++*(int *)arg;
}

static double ms_since(struct timespec t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0.tv_sec) * 1e3 + (t.tv_nsec - t0.tv_nsec) / 1e6;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s SOCKET\n", argv[0]);
		return 2;
	}
	const char *lf = getenv("QUASIM_TEST_LOAD_FACTOR");
	double load = lf ? atof(lf) : 1;
	if (!(load >= 1))
		load = 1;
	quasim_param defaults[] = {{"block", "1024"}};
	quasim_result r;
	quasim_client *q = quasim_open(argv[1][0] ? argv[1] : NULL, 2000, 60000);
	CHECK(q != NULL, "quasim_open");
	printf("sockets tried: %s%s%s\n", quasim_socket(q, 0), quasim_socket(q, 1) ? ", then " : "",
	       quasim_socket(q, 1) ? quasim_socket(q, 1) : "");

	int rc = quasim_lookup(q, "reduce", "65536", defaults, 1, &r);
	CHECK(rc == 0, "lookup rc %d: %s", rc, r.reason);
	CHECK(!strcmp(r.match, "exact"), "match %s", r.match);
	CHECK(r.certificate[0], "no certificate");
	CHECK(r.key[0] && r.etag[0], "key %s etag %s", r.key, r.etag);
	CHECK(r.n == 5, "%d params", r.n);
	printf("served %s (certificate %s):", r.key, r.certificate);
	for (int i = 0; i < r.n; i++)
		printf(" %s=%s", r.params[i].name, r.params[i].value);
	printf("\n");

	/* The key is the values joined by commas, in the spec's parameter
	 * order; the config object's names come sorted. */
	for (int i = 0; i < r.n; i++) {
		char key[512], *tok, *save = NULL;
		int found = 0;
		strcpy(key, r.key);
		for (tok = strtok_r(key, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			found |= !strcmp(tok, r.params[i].value);
		CHECK(found, "value %s=%s not in key %s", r.params[i].name, r.params[i].value, r.key);
	}

	/* Cached: no round trip. */
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	quasim_result c;
	rc = quasim_lookup(q, "reduce", "65536", defaults, 1, &c);
	CHECK(rc == 0 && !strcmp(c.key, r.key), "cached lookup rc %d key %s", rc, c.key);
	CHECK(ms_since(t0) < 1.0 * load, "cached lookup took %.3f ms", ms_since(t0));

	/* Unchanged since: 304. */
	quasim_result nm;
	rc = quasim_fetch(q, "reduce", "65536", r.etag, 0, &nm);
	CHECK(rc == 1, "fetch with the ETag: rc %d (%s)", rc, nm.reason);

	/* Nearest tuned problem. */
	rc = quasim_lookup(q, "reduce", "70000", defaults, 1, &r);
	CHECK(rc == 0 && !strcmp(r.match, "nearest") && !strcmp(r.from_problem, "65536"),
	      "nearest: rc %d match %s from %s", rc, r.match, r.from_problem);

	/* Unknown kernel: the defaults and why. */
	rc = quasim_lookup(q, "no-such-kernel", "1", defaults, 1, &r);
	CHECK(rc == -1 && r.n == 1 && !strcmp(quasim_get(&r, "block"), "1024") && strstr(r.reason, "no-such-kernel"),
	      "unknown kernel: rc %d n %d reason %s", rc, r.n, r.reason);

	/* Each fallback counts; the hook hears of the first of each run. */
	int calls = 0;
	quasim_on_fallback(q, count, &calls);
	quasim_lookup(q, "no-such-kernel", "2", defaults, 1, &r);
	CHECK(quasim_fallbacks(q) == 2 && calls == 0, "fallbacks %lu hook calls %d, want 2 and 0 (same outage)",
	      quasim_fallbacks(q), calls);
	rc = quasim_lookup(q, "reduce", "65537", defaults, 1, &r);
	CHECK(rc == 0, "reduce 65537: rc %d %s", rc, r.reason);
	quasim_lookup(q, "no-such-kernel", "3", defaults, 1, &r);
	CHECK(quasim_fallbacks(q) == 3 && calls == 1 && strstr(quasim_last_reason(q), "no-such-kernel"),
	      "fallbacks %lu hook calls %d reason %s, want 3, 1 and why", quasim_fallbacks(q), calls, quasim_last_reason(q));
	quasim_close(q);

	/* No daemon: the defaults within the timeout. */
	q = quasim_open("/nonexistent/quasimd.sock", 20, 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = quasim_lookup(q, "reduce", "65536", defaults, 1, &r);
	double took = ms_since(t0);
	CHECK(rc == -1 && !strcmp(quasim_get(&r, "block"), "1024") && strstr(r.reason, "unavailable"),
	      "no daemon: rc %d reason %s", rc, r.reason);
	CHECK(took < 50 * load, "no daemon: took %.3f ms", took);
	printf("no daemon: defaults in %.3f ms (%s)\n", took, r.reason);
	/* The default hook wrote one line on stderr, and writes no second. */
	quasim_lookup(q, "sgemm", "1", defaults, 1, &r);
	CHECK(quasim_fallbacks(q) == 2, "no daemon: fallbacks %lu, want 2", quasim_fallbacks(q));
	quasim_close(q);

	/* A served config as compiler options, as the OpenCL worker built it. */
	const char *answer = "{\"kernel\":\"k\",\"config\":{\"block_size_x\":16,\"use_local\":true,"
	                     "\"scale\":0.5,\"T\":\"float\"},\"key\":\"16,true,0.5,float\",\"match\":\"exact\"}";
	quasim_result a;
	CHECK(quasim_parse_answer(answer, strlen(answer), &a) == 0, "parse: %s", a.reason);
	char opts[256];
	int n = quasim_defines(&a, opts, sizeof opts);
	CHECK(n > 0 && !strcmp(opts, "-Dblock_size_x=16 -Duse_local=1 -Dscale=0.5 -DT=float"), "defines %d %s", n, opts);
	CHECK(quasim_defines(&a, opts, 10) == -1 && opts[0] == '\0', "defines into 10 bytes: %s", opts);

	/* And as the lines the worker puts before the source. */
	char lines[512];
	const int groups[3] = {64, 2, 1}, block[3] = {16, 1, 1};
	n = quasim_define_lines(&a, groups, block, NULL, lines, sizeof lines);
	CHECK(n > 0 && !strcmp(lines, "#define grid_size_x 64\n#define grid_size_y 2\n#define grid_size_z 1\n"
	                              "#define block_size_x 16\n#define block_size_y 1\n#define block_size_z 1\n"
	                              "#define use_local 1\n#define scale 0.5\n#define T float\n"
	                              "#define kernel_tuner 1\n#line 1\n"),
	      "define lines %d %s", n, lines);
	CHECK(quasim_define_lines(&a, groups, block, NULL, lines, 40) == -1 && lines[0] == '\0', "define lines into 40 bytes");

	if (failed)
		return 1;
	printf("ok\n");
	return 0;
}
