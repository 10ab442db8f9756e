/* bench_quasim: round trips of the C client to quasimd against the floor of
 * the same exchange with a bare Unix-socket echo server, in one run.
 * usage: bench_quasim SOCKET KERNEL PROBLEM N
 * Prints p50 and p99 in microseconds for: the echo floor (connect, send the
 * same request, read an answer of the same size, close), quasim_fetch (one
 * HTTP round trip to the daemon) and quasim_lookup from the cache. */
#define _POSIX_C_SOURCE 200809L
#include "quasim.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void report(const char *what, double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp);
	printf("%-8s p50 %8.2f us  p99 %8.2f us\n", what, v[n / 2], v[(n * 99) / 100]);
}

/* echo serves connections: read a request up to its blank line, answer
 * with size bytes, close. */
static void echo(int ls, size_t size)
{
	char *answer = malloc(size), req[4096];
	memset(answer, 'x', size);
	for (;;) {
		int fd = accept(ls, NULL, NULL);
		if (fd < 0)
			continue;
		size_t got = 0;
		for (;;) {
			ssize_t r = read(fd, req + got, sizeof req - got - 1);
			if (r <= 0)
				break;
			got += (size_t)r;
			req[got] = 0;
			if (strstr(req, "\r\n\r\n") || got + 1 >= sizeof req)
				break;
		}
		for (size_t off = 0; off < size;) {
			ssize_t w = write(fd, answer + off, size - off);
			if (w <= 0)
				break;
			off += (size_t)w;
		}
		close(fd);
	}
}

/* exchange connects to sa, sends req, reads to EOF and returns the bytes
 * read, or -1. */
static long exchange(const struct sockaddr_un *sa, const char *req, int reqlen)
{
	char buf[8192];
	long total = 0;
	ssize_t r;
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (const struct sockaddr *)sa, sizeof *sa) || write(fd, req, (size_t)reqlen) != reqlen) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((r = read(fd, buf, sizeof buf)) > 0)
		total += r;
	close(fd);
	return total;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: %s SOCKET KERNEL PROBLEM N\n", argv[0]);
		return 2;
	}
	const char *kernel = argv[2], *problem = argv[3];
	int n = atoi(argv[4]);
	if (n < 10)
		n = 10;
	double *t = malloc(sizeof(double) * (size_t)n);
	quasim_client *q = quasim_open(argv[1], 2000, 3600 * 1000);
	quasim_result r;
	if (quasim_fetch(q, kernel, problem, NULL, 0, &r) != 0) {
		fprintf(stderr, "fetch: %s\n", r.reason);
		return 1;
	}

	/* The same request text quasim_fetch sends, and an answer of the
	 * daemon's size (headers and body). */
	char req[512];
	int reqlen = snprintf(req, sizeof req, "GET /v1/configs/%s?problem=%s HTTP/1.0\r\nHost: quasimd\r\nAccept: application/json\r\n\r\n", kernel, problem);
	struct sockaddr_un daemon;
	memset(&daemon, 0, sizeof daemon);
	daemon.sun_family = AF_UNIX;
	strncpy(daemon.sun_path, argv[1], sizeof daemon.sun_path - 1);
	long answer = exchange(&daemon, req, reqlen);
	if (answer <= 0) {
		fprintf(stderr, "raw exchange with quasimd failed\n");
		return 1;
	}
	printf("request %d bytes, answer %ld bytes\n", reqlen, answer);

	char path[108];
	snprintf(path, sizeof path, "/tmp/quasim-echo-%d.sock", (int)getpid());
	unlink(path);
	int ls = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	strcpy(sa.sun_path, path);
	if (bind(ls, (struct sockaddr *)&sa, sizeof sa) || listen(ls, 64)) {
		perror("echo socket");
		return 1;
	}
	pid_t child = fork();
	if (child == 0) {
		echo(ls, (size_t)answer);
		_exit(0);
	}
	close(ls);

	for (int i = 0; i < n; i++) {
		double t0 = now_us();
		if (exchange(&sa, req, reqlen) != answer) {
			fprintf(stderr, "echo exchange %d failed\n", i);
			return 1;
		}
		t[i] = now_us() - t0;
	}
	report("echo", t, n);

	for (int i = 0; i < n; i++) {
		double t0 = now_us();
		if (quasim_fetch(q, kernel, problem, NULL, 0, &r) != 0) {
			fprintf(stderr, "fetch %d: %s\n", i, r.reason);
			return 1;
		}
		t[i] = now_us() - t0;
	}
	report("fetch", t, n);

	quasim_param none[1];
	quasim_lookup(q, kernel, problem, none, 0, &r);
	for (int i = 0; i < n; i++) {
		double t0 = now_us();
		quasim_lookup(q, kernel, problem, none, 0, &r);
		t[i] = now_us() - t0;
	}
	report("cached", t, n);

	kill(child, SIGTERM);
	waitpid(child, NULL, 0);
	unlink(path);
	quasim_close(q);
	free(t);
	return 0;
}
