/* quasim.c: see quasim.h. C99 + POSIX. */
#define _POSIX_C_SOURCE 200809L

#include "quasim.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define CACHE_SIZE 64
#define MAX_RESPONSE (1 << 20)
#define RETRY_FAILED_MS 1000

/* The socket of quasimd run as a system service; a distribution that keeps
 * it elsewhere builds with -DQUASIM_SYSTEM_SOCKET='"/var/run/quasim/quasimd.sock"'. */
#ifndef QUASIM_SYSTEM_SOCKET
#define QUASIM_SYSTEM_SOCKET "/run/quasim/quasimd.sock"
#endif

struct entry {
	int used;
	int failed;
	long long at_ms;
	char kernel[128];
	char problem[128];
	quasim_result r;
};

struct quasim_client {
	char path[2][sizeof(((struct sockaddr_un *)0)->sun_path)]; /* tried in order */
	int npath;
	int timeout_ms;
	int ttl_ms;
	unsigned next;
	struct entry cache[CACHE_SIZE];
	unsigned long fallbacks;
	char last_reason[256];
	int down; /* the last lookup that asked fell back */
	quasim_fallback_fn on_fallback;
	void *on_fallback_arg;
};

/* warn is the default fallback hook: one line on stderr. */
static void warn(const char *reason, void *arg)
{
	(void)arg;
	fprintf(stderr, "quasim: quasimd could not answer; using the caller's defaults: %s\n", reason);
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void set_reason(quasim_result *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof r->reason, fmt, ap);
	va_end(ap);
}

/* say formats into dst, truncating (set_reason for any buffer). */
static void say(char *dst, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(dst, cap, fmt, ap);
	va_end(ap);
}

static void copy(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = 0;
}

quasim_client *quasim_open(const char *socket_path, int timeout_ms, int ttl_ms)
{
	quasim_client *q = calloc(1, sizeof *q);
	if (!q)
		return NULL;
	q->timeout_ms = timeout_ms > 0 ? timeout_ms : 50;
	q->ttl_ms = ttl_ms > 0 ? ttl_ms : 10000;
	q->on_fallback = warn;
	if (!socket_path || !*socket_path)
		socket_path = getenv("QUASIM_SOCKET");
	q->npath = 1;
	if (socket_path && *socket_path) {
		copy(q->path[0], sizeof q->path[0], socket_path);
		return q;
	}
	/* The user's own daemon's socket, then the system service's. */
	const char *run = getenv("XDG_RUNTIME_DIR");
	if (getuid() == 0) {
		copy(q->path[0], sizeof q->path[0], QUASIM_SYSTEM_SOCKET);
		return q;
	} else if (run && *run) {
		snprintf(q->path[0], sizeof q->path[0], "%s/quasim/quasimd.sock", run);
	} else {
		const char *tmp = getenv("TMPDIR");
		snprintf(q->path[0], sizeof q->path[0], "%s/quasim-%u/quasimd.sock", tmp && *tmp ? tmp : "/tmp", (unsigned)getuid());
	}
	copy(q->path[1], sizeof q->path[1], QUASIM_SYSTEM_SOCKET);
	q->npath = 2;
	return q;
}

const char *quasim_socket(const quasim_client *q, int i)
{
	return i >= 0 && i < q->npath ? q->path[i] : NULL;
}

unsigned long quasim_fallbacks(const quasim_client *q)
{
	return q->fallbacks;
}

const char *quasim_last_reason(const quasim_client *q)
{
	return q->last_reason;
}

void quasim_on_fallback(quasim_client *q, quasim_fallback_fn fn, void *arg)
{
	q->on_fallback = fn;
	q->on_fallback_arg = arg;
}

void quasim_close(quasim_client *q)
{
	free(q);
}

const char *quasim_get(const quasim_result *r, const char *name)
{
	for (int i = 0; i < r->n; i++)
		if (strcmp(r->params[i].name, name) == 0)
			return r->params[i].value;
	return NULL;
}

/* ---- JSON: just enough to read a config answer, bounded and defensive. */

struct js {
	const char *s, *end;
	int depth;
};

static void ws(struct js *p)
{
	while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r'))
		p->s++;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* put appends one byte to dst; -1 when it is full. */
static int put(char *dst, size_t cap, size_t *n, char c)
{
	if (*n + 1 >= cap)
		return -1;
	dst[(*n)++] = c;
	return 0;
}

/* str parses a JSON string into dst (NUL-terminated, UTF-8). dst may be NULL
 * to skip. -1 on bad syntax or when dst is too small. */
static int str(struct js *p, char *dst, size_t cap)
{
	size_t n = 0;
	if (p->s >= p->end || *p->s != '"')
		return -1;
	p->s++;
	while (p->s < p->end) {
		unsigned char c = (unsigned char)*p->s++;
		if (c == '"') {
			if (dst)
				dst[n] = 0;
			return 0;
		}
		if (c < 0x20)
			return -1;
		if (c != '\\') {
			if (dst && put(dst, cap, &n, (char)c))
				return -1;
			continue;
		}
		if (p->s >= p->end)
			return -1;
		c = (unsigned char)*p->s++;
		char out = 0;
		switch (c) {
		case '"': out = '"'; break;
		case '\\': out = '\\'; break;
		case '/': out = '/'; break;
		case 'b': out = '\b'; break;
		case 'f': out = '\f'; break;
		case 'n': out = '\n'; break;
		case 'r': out = '\r'; break;
		case 't': out = '\t'; break;
		case 'u': {
			unsigned long cp = 0;
			if (p->end - p->s < 4)
				return -1;
			for (int i = 0; i < 4; i++) {
				int h = hexval(p->s[i]);
				if (h < 0)
					return -1;
				cp = cp * 16 + (unsigned long)h;
			}
			p->s += 4;
			if (cp >= 0xD800 && cp <= 0xDBFF) { /* a surrogate pair */
				unsigned long lo = 0;
				if (p->end - p->s < 6 || p->s[0] != '\\' || p->s[1] != 'u')
					return -1;
				for (int i = 2; i < 6; i++) {
					int h = hexval(p->s[i]);
					if (h < 0)
						return -1;
					lo = lo * 16 + (unsigned long)h;
				}
				if (lo < 0xDC00 || lo > 0xDFFF)
					return -1;
				p->s += 6;
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			} else if (cp >= 0xDC00 && cp <= 0xDFFF) {
				return -1;
			}
			char u[4];
			int k;
			if (cp < 0x80) {
				u[0] = (char)cp, k = 1;
			} else if (cp < 0x800) {
				u[0] = (char)(0xC0 | (cp >> 6)), u[1] = (char)(0x80 | (cp & 0x3F)), k = 2;
			} else if (cp < 0x10000) {
				u[0] = (char)(0xE0 | (cp >> 12)), u[1] = (char)(0x80 | ((cp >> 6) & 0x3F)),
				u[2] = (char)(0x80 | (cp & 0x3F)), k = 3;
			} else {
				u[0] = (char)(0xF0 | (cp >> 18)), u[1] = (char)(0x80 | ((cp >> 12) & 0x3F)),
				u[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), u[3] = (char)(0x80 | (cp & 0x3F)), k = 4;
			}
			for (int i = 0; i < k; i++)
				if (dst && put(dst, cap, &n, u[i]))
					return -1;
			continue;
		}
		default:
			return -1;
		}
		if (dst && put(dst, cap, &n, out))
			return -1;
	}
	return -1;
}

static int skip(struct js *p);

static int skip_container(struct js *p, char open, char close)
{
	if (++p->depth > 64)
		return -1;
	p->s++; /* open */
	ws(p);
	if (p->s < p->end && *p->s == close) {
		p->s++;
		p->depth--;
		return 0;
	}
	for (;;) {
		if (open == '{') {
			if (str(p, NULL, 0))
				return -1;
			ws(p);
			if (p->s >= p->end || *p->s++ != ':')
				return -1;
			ws(p);
		}
		if (skip(p))
			return -1;
		ws(p);
		if (p->s >= p->end)
			return -1;
		if (*p->s == ',') {
			p->s++;
			ws(p);
			continue;
		}
		if (*p->s == close) {
			p->s++;
			p->depth--;
			return 0;
		}
		return -1;
	}
}

/* skip passes over one JSON value. */
static int skip(struct js *p)
{
	ws(p);
	if (p->s >= p->end)
		return -1;
	switch (*p->s) {
	case '"':
		return str(p, NULL, 0);
	case '{':
		return skip_container(p, '{', '}');
	case '[':
		return skip_container(p, '[', ']');
	}
	const char *start = p->s;
	while (p->s < p->end && (strchr("+-.eE", *p->s) || (*p->s >= '0' && *p->s <= '9') || (*p->s >= 'a' && *p->s <= 'z')))
		p->s++;
	if (p->s == start)
		return -1;
	size_t n = (size_t)(p->s - start);
	if ((*start == 't' && !(n == 4 && !memcmp(start, "true", 4))) ||
	    (*start == 'f' && !(n == 5 && !memcmp(start, "false", 5))) ||
	    (*start == 'n' && !(n == 4 && !memcmp(start, "null", 4))))
		return -1;
	if (*start >= 'a' && *start <= 'z' && *start != 't' && *start != 'f' && *start != 'n')
		return -1;
	return 0;
}

/* text reads one value into dst: a string unquoted, anything else as its
 * JSON text. */
static int text(struct js *p, char *dst, size_t cap)
{
	ws(p);
	if (p->s < p->end && *p->s == '"')
		return str(p, dst, cap);
	const char *start = p->s;
	if (skip(p))
		return -1;
	size_t n = (size_t)(p->s - start);
	if (n >= cap)
		return -1;
	memcpy(dst, start, n);
	dst[n] = 0;
	return 0;
}

static int config_object(struct js *p, quasim_result *out)
{
	ws(p);
	if (p->s >= p->end || *p->s != '{')
		return -1;
	p->s++;
	ws(p);
	if (p->s < p->end && *p->s == '}') {
		p->s++;
		return 0;
	}
	for (;;) {
		if (out->n >= QUASIM_MAX_PARAMS)
			return -1;
		quasim_param *pr = &out->params[out->n];
		if (str(p, pr->name, sizeof pr->name))
			return -1;
		ws(p);
		if (p->s >= p->end || *p->s++ != ':')
			return -1;
		if (text(p, pr->value, sizeof pr->value))
			return -1;
		out->n++;
		ws(p);
		if (p->s >= p->end)
			return -1;
		if (*p->s == ',') {
			p->s++;
			ws(p);
			continue;
		}
		if (*p->s == '}') {
			p->s++;
			return 0;
		}
		return -1;
	}
}

int quasim_parse_answer(const char *json, unsigned long len, quasim_result *out)
{
	struct js p = {json, json + len, 0};
	char name[64];
	out->n = 0;
	out->key[0] = out->match[0] = out->certificate[0] = out->from_problem[0] = 0;
	ws(&p);
	if (p.s >= p.end || *p.s != '{')
		goto bad;
	p.s++;
	ws(&p);
	if (p.s < p.end && *p.s == '}')
		goto bad; /* no config */
	for (;;) {
		if (str(&p, name, sizeof name)) {
			/* a long name is some field we do not read */
			p.depth = 0;
			if (skip(&p))
				goto bad;
			name[0] = 0;
		}
		ws(&p);
		if (p.s >= p.end || *p.s++ != ':')
			goto bad;
		int rc;
		if (!strcmp(name, "config"))
			rc = config_object(&p, out);
		else if (!strcmp(name, "key"))
			rc = text(&p, out->key, sizeof out->key);
		else if (!strcmp(name, "match"))
			rc = text(&p, out->match, sizeof out->match);
		else if (!strcmp(name, "certificate"))
			rc = text(&p, out->certificate, sizeof out->certificate);
		else if (!strcmp(name, "from_problem"))
			rc = text(&p, out->from_problem, sizeof out->from_problem);
		else
			rc = skip(&p);
		if (rc)
			goto bad;
		ws(&p);
		if (p.s >= p.end)
			goto bad;
		if (*p.s == ',') {
			p.s++;
			ws(&p);
			continue;
		}
		if (*p.s == '}')
			break;
		goto bad;
	}
	if (!out->match[0]) {
		set_reason(out, "answer has no match");
		return -1;
	}
	return 0;
bad:
	set_reason(out, "malformed answer from quasimd at byte %ld", (long)(p.s - json));
	return -1;
}

/* ---- HTTP over the Unix socket. */

static int wait_fd(int fd, short ev, long long deadline)
{
	for (;;) {
		long long left = deadline - now_ms();
		if (left <= 0)
			return -1;
		struct pollfd pf = {fd, ev, 0};
		int rc = poll(&pf, 1, (int)left);
		if (rc > 0)
			return 0;
		if (rc == 0)
			return -1;
		if (errno != EINTR)
			return -1;
	}
}

static void escape(char *dst, size_t cap, const char *src)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;
	for (; *src && n + 4 < cap; src++) {
		unsigned char c = (unsigned char)*src;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("-._~", c)) {
			dst[n++] = (char)c;
		} else {
			dst[n++] = '%';
			dst[n++] = hex[c >> 4];
			dst[n++] = hex[c & 15];
		}
	}
	dst[n] = 0;
}

/* dial connects to the socket at path by deadline; -1 with why set when it
 * cannot. */
static int dial(const char *path, long long deadline, char *why, size_t cap)
{
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0) {
		snprintf(why, cap, "socket: %s", strerror(errno));
		return -1;
	}
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	copy(sa.sun_path, sizeof sa.sun_path, path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		int err = errno;
		if (err != EINPROGRESS && err != EAGAIN) {
			close(fd);
			snprintf(why, cap, "%s", strerror(err));
			return -1;
		}
		int soerr = 0;
		socklen_t len = sizeof soerr;
		if (wait_fd(fd, POLLOUT, deadline) || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) || soerr) {
			close(fd);
			snprintf(why, cap, "%s", soerr ? strerror(soerr) : "connect timed out");
			return -1;
		}
	}
	return fd;
}

/* send_all writes n bytes of p to fd by deadline. */
static int send_all(int fd, const char *p, size_t n, long long deadline)
{
	for (size_t off = 0; off < n;) {
		ssize_t w = send(fd, p + off, n - off, MSG_NOSIGNAL);
		if (w > 0) {
			off += (size_t)w;
			continue;
		}
		if (w < 0 && (errno == EAGAIN || errno == EINTR) && !wait_fd(fd, POLLOUT, deadline))
			continue;
		return -1;
	}
	return 0;
}

/* exchange sends req then body (bn bytes, may be NULL) to the first of q's
 * sockets that answers and reads the whole answer by deadline. It returns
 * the HTTP status with *buf (malloc'd, NUL-terminated, *len bytes; the
 * caller frees it) and *body (where the body starts in it), or -1 with why
 * set ("timeout" when the deadline passed while reading). */
static int exchange(const quasim_client *q, const char *req, size_t n, const char *body, size_t bn,
                    long long deadline, char **buf_out, size_t *len_out, char **body_out, char *why, size_t whycap)
{
	char dwhy[2][160];
	int fd = -1;
	for (int i = 0; i < q->npath && fd < 0; i++)
		fd = dial(q->path[i], deadline, dwhy[i], sizeof dwhy[i]);
	if (fd < 0) {
		if (q->npath == 2)
			say(why, whycap, "quasimd unavailable: %s: %s; nor at %s: %s", q->path[0], dwhy[0], q->path[1], dwhy[1]);
		else
			say(why, whycap, "quasimd unavailable: %s: %s", q->path[0], dwhy[0]);
		return -1;
	}
	if (send_all(fd, req, n, deadline) || (bn && send_all(fd, body, bn, deadline))) {
		say(why, whycap, "quasimd unavailable: send: %s", errno ? strerror(errno) : "closed");
		close(fd);
		return -1;
	}
	size_t cap = 8192, len = 0;
	char *buf = malloc(cap);
	if (!buf) {
		close(fd);
		say(why, whycap, "out of memory");
		return -1;
	}
	for (;;) {
		if (len + 1 >= cap) {
			if (cap >= MAX_RESPONSE) {
				free(buf);
				close(fd);
				say(why, whycap, "answer from quasimd over %d bytes", MAX_RESPONSE);
				return -1;
			}
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				close(fd);
				say(why, whycap, "out of memory");
				return -1;
			}
			buf = nb, cap *= 2;
		}
		ssize_t r = recv(fd, buf + len, cap - len - 1, 0);
		if (r > 0) {
			len += (size_t)r;
			continue;
		}
		if (r == 0)
			break;
		if ((errno == EAGAIN || errno == EINTR) && !wait_fd(fd, POLLIN, deadline))
			continue;
		free(buf);
		close(fd);
		say(why, whycap, "timeout");
		return -1;
	}
	close(fd);
	buf[len] = 0;
	int status = 0;
	if (sscanf(buf, "HTTP/%*d.%*d %d", &status) != 1) {
		free(buf);
		say(why, whycap, "not an HTTP answer from quasimd");
		return -1;
	}
	char *b = strstr(buf, "\r\n\r\n");
	*body_out = b ? b + 4 : buf + len;
	*buf_out = buf, *len_out = len;
	return status;
}

/* header copies the value of header name (without the colon) of the answer
 * in buf, whose body starts at body, into dst; "" when it is absent or too
 * long. */
static void header(const char *buf, const char *body, const char *name, char *dst, size_t cap)
{
	size_t nl = strlen(name);
	dst[0] = 0;
	for (const char *h = strstr(buf, "\r\n"); h && h + 2 < body; h = strstr(h + 2, "\r\n")) {
		if (!strncasecmp(h + 2, name, nl) && h[2 + nl] == ':') {
			const char *v = h + 3 + nl, *e;
			while (*v == ' ')
				v++;
			e = strstr(v, "\r\n");
			size_t m = e ? (size_t)(e - v) : 0;
			if (m < cap) {
				memcpy(dst, v, m);
				dst[m] = 0;
			}
			return;
		}
	}
}

/* error_message reads the message of an {"error": "...", "code": "..."}
 * body into msg; "error" when there is none. */
static void error_message(const char *body, const char *end, char *msg, size_t cap)
{
	struct js p = {body, end, 0};
	msg[0] = 0;
	ws(&p);
	if (p.s < p.end && *p.s == '{') {
		p.s++;
		char name[16];
		ws(&p);
		if (!str(&p, name, sizeof name) && !strcmp(name, "error")) {
			ws(&p);
			if (p.s < p.end && *p.s++ == ':')
				text(&p, msg, cap);
		}
	}
	if (!msg[0])
		snprintf(msg, cap, "error");
}

int quasim_fetch(quasim_client *q, const char *kernel, const char *problem,
                 const char *etag, int wait_ms, quasim_result *out)
{
	char req[2048], k[512], pr[512];
	long long deadline = now_ms() + q->timeout_ms + (wait_ms > 0 ? wait_ms : 0);
	out->reason[0] = 0;
	escape(k, sizeof k, kernel);
	escape(pr, sizeof pr, problem ? problem : "");
	int n = snprintf(req, sizeof req, "GET /v1/configs/%s?problem=%s", k, pr);
	if (etag && *etag && wait_ms > 0)
		n += snprintf(req + n, sizeof req - (size_t)n, "&wait=%dms", wait_ms);
	n += snprintf(req + n, sizeof req - (size_t)n, " HTTP/1.0\r\nHost: quasimd\r\nAccept: application/json\r\n");
	if (etag && *etag)
		n += snprintf(req + n, sizeof req - (size_t)n, "If-None-Match: %s\r\n", etag);
	n += snprintf(req + n, sizeof req - (size_t)n, "\r\n");
	if (n <= 0 || (size_t)n >= sizeof req) {
		set_reason(out, "request too long");
		return -1;
	}

	char *buf, *body;
	size_t len;
	int status = exchange(q, req, (size_t)n, NULL, 0, deadline, &buf, &len, &body, out->reason, sizeof out->reason);
	if (status < 0) {
		if (!strcmp(out->reason, "timeout"))
			set_reason(out, "quasimd did not answer within %d ms", q->timeout_ms + (wait_ms > 0 ? wait_ms : 0));
		return -1;
	}
	header(buf, body, "ETag", out->etag, sizeof out->etag);
	int rc;
	if (status == 304) {
		rc = 1;
	} else if (status == 200) {
		rc = quasim_parse_answer(body, (unsigned long)(buf + len - body), out) ? -1 : 0;
	} else {
		char msg[200];
		error_message(body, buf + len, msg, sizeof msg);
		set_reason(out, "quasimd: HTTP %d: %s", status, msg);
		rc = -1;
	}
	free(buf);
	return rc;
}

/* ---- the cache */

static struct entry *find(quasim_client *q, const char *kernel, const char *problem)
{
	for (int i = 0; i < CACHE_SIZE; i++) {
		struct entry *e = &q->cache[i];
		if (e->used && !strcmp(e->kernel, kernel) && !strcmp(e->problem, problem))
			return e;
	}
	return NULL;
}

static struct entry *slot(quasim_client *q, const char *kernel, const char *problem)
{
	struct entry *e = find(q, kernel, problem);
	if (!e) {
		e = &q->cache[q->next++ % CACHE_SIZE];
		e->used = 1;
		copy(e->kernel, sizeof e->kernel, kernel);
		copy(e->problem, sizeof e->problem, problem);
	}
	return e;
}

/* fallback counts a lookup answered with the caller's defaults and calls
 * the hook at the start of an outage. */
static void fallback(quasim_client *q, const char *reason)
{
	q->fallbacks++;
	copy(q->last_reason, sizeof q->last_reason, reason);
	if (!q->down) {
		q->down = 1;
		if (q->on_fallback)
			q->on_fallback(reason, q->on_fallback_arg);
	}
}

static void use_defaults(quasim_result *out, const quasim_param *defaults, int ndefaults, const char *reason)
{
	char why[sizeof out->reason];
	copy(why, sizeof why, reason);
	memset(out, 0, sizeof *out);
	for (int i = 0; i < ndefaults && i < QUASIM_MAX_PARAMS; i++)
		out->params[out->n++] = defaults[i];
	copy(out->reason, sizeof out->reason, why);
}

int quasim_lookup(quasim_client *q, const char *kernel, const char *problem,
                  const quasim_param *defaults, int ndefaults, quasim_result *out)
{
	if (!problem)
		problem = "";
	long long now = now_ms();
	struct entry *e = find(q, kernel, problem);
	if (e) {
		int ttl = e->failed ? (q->ttl_ms < RETRY_FAILED_MS ? q->ttl_ms : RETRY_FAILED_MS) : q->ttl_ms;
		if (now - e->at_ms < ttl) {
			if (e->failed) {
				fallback(q, e->r.reason);
				use_defaults(out, defaults, ndefaults, e->r.reason);
				return -1;
			}
			*out = e->r;
			return 0;
		}
	}
	quasim_result fresh;
	int rc = quasim_fetch(q, kernel, problem, NULL, 0, &fresh);
	if (rc == 0)
		q->down = 0;
	if (strlen(kernel) >= sizeof e->kernel || strlen(problem) >= sizeof e->problem) {
		/* not cacheable: answer without storing */
		if (rc == 0) {
			*out = fresh;
			return 0;
		}
		fallback(q, fresh.reason);
		use_defaults(out, defaults, ndefaults, fresh.reason);
		return -1;
	}
	if (rc == 0) {
		e = slot(q, kernel, problem);
		e->r = fresh, e->failed = 0, e->at_ms = now_ms();
		*out = fresh;
		return 0;
	}
	if (e && !e->failed) {
		/* keep serving the last answer, saying why it is old */
		char why[sizeof fresh.reason];
		snprintf(why, sizeof why, "stale: %.240s", fresh.reason);
		copy(e->r.reason, sizeof e->r.reason, why);
		e->at_ms = now_ms();
		*out = e->r;
		return 0;
	}
	e = slot(q, kernel, problem);
	e->failed = 1, e->at_ms = now_ms();
	copy(e->r.reason, sizeof e->r.reason, fresh.reason);
	fallback(q, fresh.reason);
	use_defaults(out, defaults, ndefaults, fresh.reason);
	return -1;
}
