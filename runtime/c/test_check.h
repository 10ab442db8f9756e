/* test_check.h: the C test programs' assertion. CHECK reports a failed
 * condition with its file and line and marks the run failed; the program
 * returns failed from main. */
#ifndef QUASIM_TEST_CHECK_H
#define QUASIM_TEST_CHECK_H

#include <stdio.h>

static int failed;

#define CHECK(cond, ...)                                                     \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                        \
			fprintf(stderr, "\n");                               \
			failed = 1;                                          \
		}                                                            \
	} while (0)

#endif
