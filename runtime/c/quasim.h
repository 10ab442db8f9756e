/*
 * quasim.h: ask quasimd which config to launch a kernel with.
 *
 * C99, no dependencies beyond POSIX sockets. A repeat lookup is answered from
 * a small in-process cache; a miss asks the daemon over its Unix socket within
 * the client's timeout, and when the daemon is down or does not know the
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
 * thread, or lock around it.
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

/* quasim_parse_answer parses a GET /v1/configs JSON body into out. Returns 0,
 * or -1 with out->reason set. Exposed for tests. */
int quasim_parse_answer(const char *json, unsigned long len, quasim_result *out);

#ifdef __cplusplus
}
#endif

#endif
