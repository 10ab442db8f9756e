/* test_spans: the C client's span recorder against a server of POST
 * /v1/spans that knows pipelines c-fj, c-cap, c-threads, c-names and c-429,
 * the last answered 429 twice (the Go test TestCSpans in runtime/ runs one,
 * and checks what it received).
 * usage: test_spans SOCKET [e2e]
 * It also prints the cost of a start/end pair. With e2e, against a real
 * quasimd that declares pipeline c-fj: only the fork-join iterations and an
 * undeclared pipeline. */
#define _POSIX_C_SOURCE 200809L
#include "quasim.h"
#include "test_check.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* fork_join records one iteration: a, then b and c on two streams after
 * it, then d after both. */
static void fork_join(quasim_spans *s)
{
	quasim_span a = quasim_span_start(s, "a", "64", "s0", NULL, 0);
	quasim_span_end(s, &a);
	unsigned long long after_a[] = {a.id};
	quasim_span b = quasim_span_start(s, "b", "64", "s0", after_a, 1);
	quasim_span c = quasim_span_start(s, "c", "64", "s1", after_a, 1);
	quasim_span_end(s, &c);
	quasim_span_end(s, &b);
	unsigned long long after_bc[] = {b.id, c.id};
	quasim_span d = quasim_span_start(s, "d", "64", "s0", after_bc, 2);
	quasim_span_end(s, &d);
}

struct worker {
	quasim_spans *s;
	char stream[16];
};

static void *work(void *arg)
{
	struct worker *w = arg;
	for (int i = 0; i < 1000; i++) {
		quasim_span sp = quasim_span_start(w->s, "k", "", w->stream, NULL, 0);
		quasim_span_end(w->s, &sp);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2 && !(argc == 3 && !strcmp(argv[2], "e2e"))) {
		fprintf(stderr, "usage: %s SOCKET [e2e]\n", argv[0]);
		return 2;
	}
	const char *sock = argv[1];
	int e2e = argc == 3; /* against quasimd: only c-fj, and an undeclared pipeline */
	quasim_span_stats st;
	quasim_span sp;

	/* Two iterations, with the background thread. */
	quasim_span_options slow = {0};
	slow.interval_ms = 60000;
	quasim_spans *s = quasim_spans_open(sock, "c-fj", "cpu0", &slow);
	CHECK(s != NULL, "open");
	fork_join(s);
	CHECK(quasim_spans_next_iteration(s) == 1, "next iteration");
	fork_join(s);
	int rc = quasim_spans_close(s, 5000, &st);
	CHECK(rc == 0 && st.ended == 8 && st.sent == 8 && st.deps_dropped == 0 && st.batches >= 1,
	      "fork-join: rc %d ended %llu sent %llu batches %llu deps dropped %llu (%s)", rc, st.ended, st.sent,
	      st.batches, st.deps_dropped, st.last_error);

	/* An unknown pipeline: the batch is rejected, saying why. */
	quasim_span_options one = {0};
	one.no_thread = 1;
	s = quasim_spans_open(sock, "nope", NULL, &one);
	sp = quasim_span_start(s, "k", "", "s0", NULL, 0);
	quasim_span_end(s, &sp);
	rc = quasim_spans_close(s, 1000, &st);
	CHECK(rc == -1 && st.rejected == 1 && strstr(st.last_error, "404") && strstr(st.last_error, "nope"),
	      "unknown pipeline: rc %d rejected %llu (%s)", rc, st.rejected, st.last_error);

	if (e2e)
		goto done;

	/* No thread, a buffer of 4: the fifth and sixth span are dropped at
	 * once; the flush sends the rest; a dep past the limit and a name too
	 * long are counted. */
	quasim_span_options small = {0};
	small.capacity = 4, small.no_thread = 1;
	s = quasim_spans_open(sock, "c-cap", NULL, &small);
	unsigned long long many[QUASIM_SPAN_MAX_DEPS + 2] = {0};
	for (int i = 0; i < 6; i++) {
		quasim_span sp = quasim_span_start(s, "k", "", "s0", i == 0 ? many : NULL, i == 0 ? QUASIM_SPAN_MAX_DEPS + 2 : 0);
		quasim_span_end(s, &sp);
	}
	char longname[QUASIM_SPAN_NAME_LEN + 1];
	memset(longname, 'x', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	sp = quasim_span_start(s, longname, "", "s0", NULL, 0);
	quasim_span_end(s, &sp);
	quasim_spans_stats(s, &st);
	CHECK(st.ended == 7 && st.dropped_full == 2 && st.invalid == 1 && st.sent == 0, "small buffer: ended %llu dropped %llu invalid %llu sent %llu",
	      st.ended, st.dropped_full, st.invalid, st.sent);
	rc = quasim_spans_flush(s);
	quasim_spans_stats(s, &st);
	/* 2 past the limit, and the 8 kept name span 0, not in the batch. */
	CHECK(rc == 0 && st.sent == 4 && st.batches == 1 && st.deps_dropped == QUASIM_SPAN_MAX_DEPS + 2,
	      "flush: rc %d sent %llu batches %llu deps dropped %llu (%s)", rc, st.sent, st.batches, st.deps_dropped, st.last_error);
	quasim_spans_close(s, 1000, NULL);

	/* Names that JSON must escape reach the server as they were. */
	s = quasim_spans_open(sock, "c-names", NULL, &small);
	sp = quasim_span_start(s, "q\"\\\n\x01\xc3\xa9/k", "1,2", "s\t0", NULL, 0);
	quasim_span_end(s, &sp);
	rc = quasim_spans_close(s, 5000, &st);
	CHECK(rc == 0 && st.sent == 1, "names: rc %d sent %llu (%s)", rc, st.sent, st.last_error);

	/* 500 spans with names of random bytes (quotes, backslashes, control
	 * characters, bytes that are not UTF-8): the JSON written is valid,
	 * the server takes the batch. */
	quasim_span_options many_opt = {0};
	many_opt.no_thread = 1;
	s = quasim_spans_open(sock, "c-random", NULL, &many_opt);
	unsigned seed = 1;
	for (int i = 0; i < 500; i++) {
		char names[3][QUASIM_SPAN_NAME_LEN];
		for (int k = 0; k < 3; k++) {
			int n = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % (QUASIM_SPAN_NAME_LEN - 1);
			for (int j = 0; j < n; j++)
				names[k][j] = (char)(1 + ((seed = seed * 1103515245u + 12345u) >> 16) % 255);
			names[k][n] = 0;
		}
		sp = quasim_span_start(s, names[0], names[1], names[2], NULL, 0);
		quasim_span_end(s, &sp);
	}
	rc = quasim_spans_close(s, 5000, &st);
	CHECK(rc == 0 && st.sent == 500, "random names: rc %d sent %llu (%s)", rc, st.sent, st.last_error);

	/* Rate-limited twice (429, no Retry-After): the batch is kept and sent
	 * again after a backoff of interval_ms, then 2 x interval_ms. */
	quasim_span_options quick = {0};
	quick.interval_ms = 20;
	s = quasim_spans_open(sock, "c-429", NULL, &quick);
	fork_join(s);
	quasim_spans_next_iteration(s);
	double t0 = now_ns();
	do {
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL);
		quasim_spans_stats(s, &st);
	} while (st.sent < 4 && now_ns() - t0 < 10e9);
	CHECK(st.sent == 4 && strstr(st.last_error, "429"), "429: sent %llu (%s)", st.sent, st.last_error);
	quasim_spans_close(s, 1000, NULL);

	/* Four threads at once. */
	quasim_span_options big = {0};
	big.capacity = 8192, big.batch = 1000, big.interval_ms = 10;
	s = quasim_spans_open(sock, "c-threads", NULL, &big);
	pthread_t th[4];
	struct worker w[4];
	for (int i = 0; i < 4; i++) {
		w[i].s = s;
		snprintf(w[i].stream, sizeof w[i].stream, "t%d", i);
		pthread_create(&th[i], NULL, work, &w[i]);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	rc = quasim_spans_close(s, 5000, &st);
	CHECK(rc == 0 && st.sent == 4000 && st.dropped_full == 0, "threads: rc %d sent %llu dropped %llu (%s)", rc, st.sent,
	      st.dropped_full, st.last_error);

	/* A failed open's NULL does nothing. */
	CHECK(quasim_spans_open(sock, "", NULL, NULL) == NULL, "open with an empty pipeline");
	sp = quasim_span_start(NULL, "k", "", "s0", NULL, 0);
	quasim_span_end(NULL, &sp);
	CHECK(quasim_spans_next_iteration(NULL) == 0 && quasim_spans_close(NULL, 1, &st) == 0 && st.ended == 0, "NULL recorder");

	/* No daemon: ends never wait, close gives up, spans counted unsent. */
	t0 = now_ns();
	s = quasim_spans_open("/nonexistent/quasimd.sock", "p", NULL, NULL);
	for (int i = 0; i < 3; i++) {
		sp = quasim_span_start(s, "k", "", "s0", NULL, 0);
		quasim_span_end(s, &sp);
	}
	rc = quasim_spans_close(s, 200, &st);
	double took = (now_ns() - t0) / 1e6;
	CHECK(rc == -1 && st.unsent == 3 && strstr(st.last_error, "unavailable"), "no daemon: rc %d unsent %llu (%s)", rc,
	      st.unsent, st.last_error);
	CHECK(took < 1000, "no daemon: close took %.1f ms", took);

	/* The cost of a start/end pair with a dep, with room in the buffer:
	 * rounds of 4096, the buffer emptied off the clock between them (the
	 * flush fails at once: no daemon), the first two rounds untimed so that
	 * both buffers' pages are touched; the median round, since a round a
	 * loaded machine preempts is worth nothing. */
	quasim_span_options bench = {0};
	bench.capacity = 4096, bench.no_thread = 1;
	s = quasim_spans_open("/nonexistent/quasimd.sock", "p", NULL, &bench);
	sp = quasim_span_start(s, "k", "64", "s0", NULL, 0);
	enum { ROUNDS = 66 };
	double per[ROUNDS];
	for (int r = 0; r < ROUNDS; r++) {
		t0 = now_ns();
		for (int i = 0; i < bench.capacity; i++) {
			unsigned long long dep = sp.id;
			sp = quasim_span_start(s, "k", "64", "s0", &dep, 1);
			quasim_span_end(s, &sp);
		}
		per[r] = (now_ns() - t0) / bench.capacity;
		quasim_spans_flush(s);
	}
	quasim_spans_stats(s, &st);
	CHECK(st.dropped_full == 0, "bench: %llu dropped", st.dropped_full);
	quasim_spans_close(s, 1, NULL);
	qsort(per + 2, ROUNDS - 2, sizeof per[0], cmp_double);
	printf("span pair %.1f ns\n", per[2 + (ROUNDS - 2) / 2]);

done:
	if (failed)
		return 1;
	printf("ok\n");
	return 0;
}
