/*
 * quasim.h: ask quasimd which config to launch a kernel with, and tell it
 * what a pipeline's launches took (spans, below).
 *
 * C99 and POSIX: sockets, and threads for the span recorder (link with
 * -pthread). A repeat lookup is answered from a small in-process cache; a
 * miss asks the daemon over its Unix socket within the client's timeout, and when the daemon is down or does not know the
 * kernel, the caller's defaults come back with the reason: a launch is never
 * blocked.
 *
 *     quasim_client *q = quasim_open(NULL, 50, 10000);   // $QUASIM_SOCKET or default
 *     quasim_param defaults[] = {{"tile", "16"}};
 *     quasim_result r;
 *     quasim_lookup(q, "sgemm", "1024,1024,1024", defaults, 1, &r);
 *     const char *tile = quasim_get(&r, "tile");
 *     ...
 *     quasim_close(q);
 *
 * Values are the JSON text of each parameter's value, strings unquoted
 * ("16", "0.5", "true", "ikj"). A client is not thread-safe: use one per
 * thread, or lock around it. A span recorder (quasim_spans_open, below) is.
 */
#ifndef QUASIM_H
#define QUASIM_H

#ifdef __cplusplus
extern "C" {
#endif

#define QUASIM_MAX_PARAMS 32
#define QUASIM_NAME_LEN 64
#define QUASIM_VALUE_LEN 128

typedef struct {
	char name[QUASIM_NAME_LEN];
	char value[QUASIM_VALUE_LEN];
} quasim_param;

typedef struct {
	int n;                                  /* parameters in params */
	quasim_param params[QUASIM_MAX_PARAMS];
	char key[512];                          /* canonical config key; "" for defaults */
	char match[16];                         /* exact, nearest, default; "" for defaults */
	char certificate[96];                   /* certificate id behind the config */
	char from_problem[128];                 /* for nearest: the tuned problem used */
	char etag[64];                          /* the answer's ETag */
	char reason[256];                       /* why these are the defaults; "" otherwise */
} quasim_result;

typedef struct quasim_client quasim_client;

/* quasim_open returns a client of the daemon at socket_path. NULL tries, in
 * order: $QUASIM_SOCKET alone when set; else the user's own daemon's socket
 * ($XDG_RUNTIME_DIR/quasim/quasimd.sock, else /tmp/quasim-<uid>/quasimd.sock),
 * then the system service's (/run/quasim/quasimd.sock; for root only that
 * one), on every request. timeout_ms bounds each request to
 * the daemon (<= 0: 50 ms); ttl_ms is how long a cached answer is used
 * (<= 0: 10 s). NULL when out of memory. */
quasim_client *quasim_open(const char *socket_path, int timeout_ms, int ttl_ms);

void quasim_close(quasim_client *q);

/* quasim_lookup fills out with the config to launch kernel with at problem
 * ("1024,1024,1024"). It returns 0 when the answer is the daemon's (cached or
 * not), -1 when out holds the defaults and out->reason says why. */
int quasim_lookup(quasim_client *q, const char *kernel, const char *problem,
                  const quasim_param *defaults, int ndefaults, quasim_result *out);

/* quasim_fetch asks the daemon, bypassing the cache. etag, if not NULL or
 * empty, is sent as If-None-Match; wait_ms > 0 then long-polls for a change.
 * Returns 0 with out filled, 1 when the answer is unchanged (HTTP 304), -1
 * with out->reason set on failure. */
int quasim_fetch(quasim_client *q, const char *kernel, const char *problem,
                 const char *etag, int wait_ms, quasim_result *out);

/* quasim_socket returns the i-th socket the client tries (0 first), or NULL. */
const char *quasim_socket(const quasim_client *q, int i);

/* quasim_fallbacks counts the lookups that returned the caller's defaults
 * because quasimd could not answer; quasim_last_reason says why the last
 * one did ("" before any). */
unsigned long quasim_fallbacks(const quasim_client *q);
const char *quasim_last_reason(const quasim_client *q);

/* quasim_on_fallback sets the hook called with the reason when a lookup
 * falls back to the defaults: for the first one, and again for the first
 * after quasimd answered in between (once per outage). The default hook
 * writes one line to stderr; fn NULL silences it. */
typedef void (*quasim_fallback_fn)(const char *reason, void *arg);
void quasim_on_fallback(quasim_client *q, quasim_fallback_fn fn, void *arg);

/* quasim_get returns the value of parameter name in r, or NULL. */
const char *quasim_get(const quasim_result *r, const char *name);

/* quasim_defines writes r's config as compiler options, "-DNAME=VALUE" for
 * each parameter, space-separated, into buf (size bytes, NUL-terminated):
 * the options quasimd's OpenCL worker compiled and verified the config with
 * (numbers as their JSON text, true and false as 1 and 0, strings as
 * written). Returns the length written, or -1 when buf is too small (buf
 * then holds ""). */
int quasim_defines(const quasim_result *r, char *buf, unsigned long size);

/* quasim_define_lines writes the lines quasimd's OpenCL worker puts before
 * the kernel's source for r's config, as Kernel Tuner writes them:
 * "#define grid_size_x G" (work-groups, groups[0..2]), the block sizes
 * (block[0..2], named block_names[0..2], NULL for block_size_x/y/z), each
 * other parameter, "#define kernel_tuner 1", then "#line 1". Build
 * buf followed by the source to compile the config exactly as it was tuned
 * and verified (a parameter may then be named as an OpenCL qualifier, which
 * -D options break). Returns the length written, or -1 when buf is too
 * small (buf then holds ""). */
int quasim_define_lines(const quasim_result *r, const int groups[3], const int block[3],
                        const char *const block_names[3], char *buf, unsigned long size);

/* quasim_parse_answer parses a GET /v1/configs JSON body into out. Returns 0,
 * or -1 with out->reason set. Exposed for tests. */
int quasim_parse_answer(const char *json, unsigned long len, quasim_result *out);

/* ---- Spans: what a pipeline's kernel launches took, for quasimd's causal
 * profile (POST /v1/spans).
 *
 *     quasim_spans *s = quasim_spans_open(NULL, "infer", "gpu0", NULL);
 *     quasim_span a = quasim_span_start(s, "conv2d", "224,224", "stream0", NULL, 0);
 *     launch(...); wait(...);
 *     quasim_span_end(s, &a);
 *     unsigned long long after[] = {a.id};
 *     quasim_span b = quasim_span_start(s, "reduce", "65536", "stream1", after, 1);
 *     ...
 *     quasim_spans_next_iteration(s);      // at the end of each pass of the pipeline
 *     ...
 *     quasim_spans_close(s, 1000, NULL);   // sends what is left within 1 s
 *
 * Start and end read the monotonic clock (times are sent as Unix ns) and
 * take a mutex only to copy one span; they never do I/O and never wait on
 * the daemon. A background thread (POSIX threads: link with -pthread) sends
 * the spans: those of a finished iteration together, once all of them have
 * ended, and iterations in order; the others once interval_ms has passed
 * or a batch of them is waiting. With
 * no_thread set there is no thread, and the application calls
 * quasim_spans_flush where it may block (never on the launch path).
 *
 * A dependency on a span outside the batch it is sent in is dropped and
 * counted (an iteration is kept in one batch when it fits). Nothing is
 * validated here beyond that: a batch quasimd refuses (two spans overlapping
 * on one stream, a cycle, an unknown pipeline) is dropped whole and counted
 * as rejected, with the daemon's reason in last_error. When the buffer is
 * full, or the daemon is away for long, spans are dropped and counted,
 * never waited for. A recorder is safe to use from several threads. Every
 * call takes a NULL recorder (what a failed open returns) and does nothing,
 * so an application records nothing rather than crash. */

#define QUASIM_SPAN_MAX_DEPS 8      /* deps kept per span; the rest are dropped and counted */
#define QUASIM_SPAN_NAME_LEN 64     /* kernel and stream names, NUL included */
#define QUASIM_SPAN_PROBLEM_LEN 128 /* problem, NUL included */

typedef struct quasim_spans quasim_spans;

/* A started span; pass it to quasim_span_end. The strings are the
 * caller's, read at end: keep them alive until then. */
typedef struct {
	unsigned long long id;  /* unique in its recorder; name it in later spans' deps */
	long long start_ns;
	long long iteration;
	const char *kernel, *problem, *stream;
	int ndeps;
	unsigned long long deps[QUASIM_SPAN_MAX_DEPS];
} quasim_span;

typedef struct {
	int capacity;    /* spans waiting to be sent (<= 0: 1024); an end past it drops its span */
	int batch;       /* most spans per request, and the count that wakes the sender (<= 0: 512) */
	int interval_ms; /* longest a span of the running iteration waits (<= 0: 1000); requests
	                  * are at least interval_ms/4 apart unless a full batch waits */
	int timeout_ms;  /* bounds one request (<= 0: 2000) */
	int no_thread;   /* 1: no background thread; call quasim_spans_flush */
} quasim_span_options;

/* What became of a recorder's spans. Each span ended is, in the end, sent,
 * dropped_full, unsent, rejected or invalid, or still waiting. */
typedef struct {
	unsigned long long ended;        /* quasim_span_end calls */
	unsigned long long sent;         /* spans quasimd accepted */
	unsigned long long batches;      /* requests quasimd accepted */
	unsigned long long dropped_full; /* lost at end: the buffer was full, or the recorder closing */
	unsigned long long unsent;       /* lost: quasimd away or rate-limiting for long, or the close deadline */
	unsigned long long rejected;     /* quasimd refused their batch: nothing of it was stored */
	unsigned long long invalid;      /* dropped at end: a name longer than its QUASIM_SPAN_*_LEN */
	unsigned long long deps_dropped; /* deps on spans outside their batch, or past QUASIM_SPAN_MAX_DEPS */
	char last_error[256];            /* why the last batch was not sent; "" if all were */
} quasim_span_stats;

/* quasim_spans_open returns a recorder of pipeline's spans on device ("" or
 * NULL for none), sending to the daemon at socket_path (NULL: found as
 * quasim_open finds it); opt NULL takes the defaults. NULL when pipeline is
 * empty, or out of memory or threads. */
quasim_spans *quasim_spans_open(const char *socket_path, const char *pipeline, const char *device,
                                const quasim_span_options *opt);

/* quasim_span_start starts a span of kernel at problem ("" or NULL for
 * none) on stream, after the spans whose ids deps names (ndeps of them). */
quasim_span quasim_span_start(quasim_spans *s, const char *kernel, const char *problem, const char *stream,
                              const unsigned long long *deps, int ndeps);

/* quasim_span_end ends sp and queues it; call it once per span. */
void quasim_span_end(quasim_spans *s, const quasim_span *sp);

/* quasim_spans_next_iteration ends one pass of the pipeline: spans started
 * from now on belong to the next, whose number it returns. */
long long quasim_spans_next_iteration(quasim_spans *s);

/* quasim_spans_flush sends every span that has ended, on the caller's
 * thread, each request within timeout_ms. 0 when all were sent or settled,
 * -1 when quasimd was away or rate-limiting (they are kept for later). */
int quasim_spans_flush(quasim_spans *s);

/* quasim_spans_stats copies the counts so far into out. */
void quasim_spans_stats(quasim_spans *s, quasim_span_stats *out);

/* quasim_spans_close sends what has ended within timeout_ms (<= 0: the
 * request timeout; a request the thread has under way may take up to the
 * request timeout), stops the thread and frees s; final, if not NULL, gets
 * the last counts. 0 when every span ended was sent, -1 otherwise (final
 * says what became of them). */
int quasim_spans_close(quasim_spans *s, int timeout_ms, quasim_span_stats *final);

#ifdef __cplusplus
}
#endif

#endif
