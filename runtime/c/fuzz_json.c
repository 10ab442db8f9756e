/* fuzz_json: the answer parser on fixed cases, then on random mutations of
 * a real answer; built with -fsanitize=address,undefined by the tests.
 * usage: fuzz_json [ITERATIONS] */
#include "quasim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *seed =
    "{\"kernel\":\"reduce\",\"problem\":\"65536\",\"device\":\"cpu/amd64/2c\","
    "\"config\":{\"block\":16384,\"workers\":8,\"unroll\":2,\"acc\":\"float32\"},"
    "\"key\":\"16384,8,2,float32\",\"match\":\"exact\",\"time_ms\":0.26,"
    "\"certificate\":\"c-1f2e\",\"spec_hash\":\"ab\",\"trial\":{\"key\":\"x\",\"times_ms\":[1,2.5e-3]},"
    "\"promoted_at\":\"2026-11-21T18:59:23Z\"}";

static int fail;

static void expect(const char *json, int rc, const char *name, const char *value)
{
	quasim_result r;
	int got = quasim_parse_answer(json, strlen(json), &r);
	if (got != rc) {
		fprintf(stderr, "FAIL %s: rc %d, want %d (%s)\n", json, got, rc, r.reason);
		fail = 1;
		return;
	}
	if (rc == 0 && name) {
		const char *v = quasim_get(&r, name);
		if (!v || strcmp(v, value)) {
			fprintf(stderr, "FAIL %s: %s = %s, want %s\n", json, name, v ? v : "(none)", value);
			fail = 1;
		}
	}
}

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 100000;
	expect(seed, 0, "acc", "float32");
	expect(seed, 0, "block", "16384");
	expect("{\"match\":\"exact\",\"config\":{\"s\":\"a\\\"b\\\\c\\u00e9\\ud83d\\ude00\"}}", 0, "s", "a\"b\\c\xc3\xa9\xf0\x9f\x98\x80");
	expect("{\"match\":\"default\",\"config\":{\"b\":true,\"n\":null,\"x\":-1.5e+3}}", 0, "x", "-1.5e+3");
	expect("{\"match\":\"default\",\"config\":{\"b\":true}}", 0, "b", "true");
	expect("{\"config\":{}}", -1, NULL, NULL);
	expect("{\"match\":\"exact\",\"config\":{\"a\":1,}}", -1, NULL, NULL);
	expect("{\"match\":\"exact\",\"config\":{\"a\":tru}}", -1, NULL, NULL);
	expect("{\"match\":\"exact\",\"config\":{\"a\":\"\\ud800\"}}", -1, NULL, NULL);
	expect("[", -1, NULL, NULL);
	expect("", -1, NULL, NULL);
	{
		/* deep nesting is refused, not recursed into without bound */
		char deep[4096];
		int n = sprintf(deep, "{\"match\":\"exact\",\"x\":");
		for (int i = 0; i < 1000; i++)
			deep[n++] = '[';
		deep[n] = 0;
		expect(deep, -1, NULL, NULL);
	}

	size_t len = strlen(seed);
	char *buf = malloc(len * 2 + 1);
	unsigned long long x = 88172645463325252ULL;
	for (long i = 0; i < iters; i++) {
		size_t n = len;
		memcpy(buf, seed, len);
		int edits = 1 + (int)(x % 8);
		for (int e = 0; e < edits; e++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			size_t at = (size_t)(x % n);
			switch ((x >> 32) % 4) {
			case 0: buf[at] = (char)(x >> 40); break;               /* flip a byte */
			case 1: if (n > 1) { memmove(buf + at, buf + at + 1, n - at - 1); n--; } break; /* delete */
			case 2: if (n < len * 2) { memmove(buf + at + 1, buf + at, n - at); buf[at] = "{}[]\",:\\u0"[(x >> 48) % 11]; n++; } break;
			case 3: n = at + 1; break;                              /* truncate */
			}
		}
		quasim_result r;
		quasim_parse_answer(buf, n, &r); /* must not crash or overrun */
	}
	free(buf);
	if (fail)
		return 1;
	printf("ok: fixed cases and %ld mutations\n", iters);
	return 0;
}
