/* quasim.c: see quasim.h. C99 + POSIX. */
#define _POSIX_C_SOURCE 200809L

#include "quasim.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
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

int quasim_defines(const quasim_result *r, char *buf, unsigned long size)
{
	unsigned long n = 0;
	if (size == 0)
		return -1;
	buf[0] = '\0';
	for (int i = 0; i < r->n; i++) {
		const char *v = r->params[i].value;
		if (strcmp(v, "true") == 0)
			v = "1";
		else if (strcmp(v, "false") == 0)
			v = "0";
		int w = snprintf(buf + n, size - n, "%s-D%s=%s", n ? " " : "", r->params[i].name, v);
		if (w < 0 || (unsigned long)w >= size - n) {
			buf[0] = '\0';
			return -1;
		}
		n += (unsigned long)w;
	}
	return (int)n;
}

/* appendf appends to buf at *n; -1 when it does not fit. */
static int appendf(char *buf, unsigned long size, unsigned long *n, const char *fmt, const char *name, const char *v)
{
	int w = snprintf(buf + *n, size - *n, fmt, name, v);
	if (w < 0 || (unsigned long)w >= size - *n)
		return -1;
	*n += (unsigned long)w;
	return 0;
}

int quasim_define_lines(const quasim_result *r, const int groups[3], const int block[3],
                        const char *const block_names[3], char *buf, unsigned long size)
{
	static const char *const grid[3] = {"grid_size_x", "grid_size_y", "grid_size_z"};
	static const char *const dflt[3] = {"block_size_x", "block_size_y", "block_size_z"};
	char num[24];
	unsigned long n = 0;
	if (size == 0)
		return -1;
	buf[0] = '\0';
	for (int d = 0; d < 3; d++) {
		snprintf(num, sizeof num, "%d", groups[d]);
		if (appendf(buf, size, &n, "#define %s %s\n", grid[d], num) < 0)
			goto small;
	}
	for (int d = 0; d < 3; d++) {
		const char *name = block_names && block_names[d] ? block_names[d] : dflt[d];
		snprintf(num, sizeof num, "%d", block[d]);
		if (appendf(buf, size, &n, "#define %s %s\n", name, num) < 0)
			goto small;
	}
	for (int i = 0; i < r->n; i++) {
		const char *v = r->params[i].value;
		int dup = 0;
		for (int d = 0; d < 3; d++)
			dup |= !strcmp(r->params[i].name, block_names && block_names[d] ? block_names[d] : dflt[d]);
		if (dup) /* its value is the block size, written above */
			continue;
		if (strcmp(v, "true") == 0)
			v = "1";
		else if (strcmp(v, "false") == 0)
			v = "0";
		if (appendf(buf, size, &n, "#define %s %s\n", r->params[i].name, v) < 0)
			goto small;
	}
	if (appendf(buf, size, &n, "#define %s %s\n#line 1\n", "kernel_tuner", "1") < 0)
		goto small;
	return (int)n;
small:
	buf[0] = '\0';
	return -1;
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

/* ---- spans (see quasim.h) */

struct span_rec {
	unsigned long long id;
	long long iteration, start, end;
	int ndeps;
	unsigned long long deps[QUASIM_SPAN_MAX_DEPS];
	char kernel[QUASIM_SPAN_NAME_LEN], stream[QUASIM_SPAN_NAME_LEN], problem[QUASIM_SPAN_PROBLEM_LEN];
};

/* OPEN_SLOTS is how many recent iterations the sender tells apart by their
 * open spans; an older one counts as ended. */
#define OPEN_SLOTS 64

struct quasim_spans {
	quasim_client *q; /* the sockets; the sender's only */
	char pipeline[128], device[128];
	quasim_span_options opt;
	long long offset_ns; /* Unix time minus the monotonic clock */

	pthread_mutex_t mu; /* guards the fields up to send_mu */
	pthread_cond_t cv;
	unsigned long long next_id;
	long long iteration;
	long long open[OPEN_SLOTS]; /* spans started, not ended, of iteration i in open[i % OPEN_SLOTS] */
	struct span_rec *fill;      /* where end writes */
	int nfill;
	int wake, closing;
	long long close_deadline_ms;
	quasim_span_stats st;

	pthread_mutex_t send_mu; /* one sender at a time; guards what follows */
	struct span_rec *spare;  /* swapped with fill */
	struct span_rec *pending; /* ended, not yet sent */
	int npending;
	long long hold_ms; /* no request before this */
	long long last_ms; /* when the last batch went */
	long long released; /* the first iteration not yet sent whole */
	int backoff_ms;
	int has_thread;
	pthread_t thread;
};

static long long mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int copy_name(char *dst, size_t cap, const char *src)
{
	size_t n = src ? strlen(src) : 0;
	if (n >= cap)
		return -1;
	if (n)
		memcpy(dst, src, n);
	dst[n] = 0;
	return 0;
}

quasim_span quasim_span_start(quasim_spans *s, const char *kernel, const char *problem, const char *stream,
                              const unsigned long long *deps, int ndeps)
{
	quasim_span sp;
	if (!s) {
		memset(&sp, 0, sizeof sp);
		return sp;
	}
	if (ndeps < 0 || !deps)
		ndeps = 0;
	pthread_mutex_lock(&s->mu);
	sp.id = ++s->next_id;
	sp.iteration = s->iteration;
	s->open[sp.iteration % OPEN_SLOTS]++;
	if (ndeps > QUASIM_SPAN_MAX_DEPS)
		s->st.deps_dropped += (unsigned long long)(ndeps - QUASIM_SPAN_MAX_DEPS);
	pthread_mutex_unlock(&s->mu);
	if (ndeps > QUASIM_SPAN_MAX_DEPS)
		ndeps = QUASIM_SPAN_MAX_DEPS;
	sp.kernel = kernel, sp.problem = problem, sp.stream = stream;
	sp.ndeps = ndeps;
	if (ndeps)
		memcpy(sp.deps, deps, (size_t)ndeps * sizeof *deps);
	sp.start_ns = mono_ns() + s->offset_ns;
	return sp;
}

void quasim_span_end(quasim_spans *s, const quasim_span *sp)
{
	struct span_rec r;
	if (!s || !sp || !sp->id)
		return;
	r.end = mono_ns() + s->offset_ns;
	r.id = sp->id, r.iteration = sp->iteration, r.start = sp->start_ns;
	r.ndeps = sp->ndeps < 0 ? 0 : sp->ndeps > QUASIM_SPAN_MAX_DEPS ? QUASIM_SPAN_MAX_DEPS : sp->ndeps;
	memcpy(r.deps, sp->deps, (size_t)r.ndeps * sizeof r.deps[0]);
	int bad = !sp->kernel || !*sp->kernel || copy_name(r.kernel, sizeof r.kernel, sp->kernel) ||
	          copy_name(r.stream, sizeof r.stream, sp->stream) || copy_name(r.problem, sizeof r.problem, sp->problem);
	pthread_mutex_lock(&s->mu);
	s->st.ended++;
	if (r.iteration >= 0)
		s->open[r.iteration % OPEN_SLOTS]--;
	if (bad) {
		s->st.invalid++;
	} else if (s->closing || s->nfill >= s->opt.capacity) {
		s->st.dropped_full++;
	} else {
		memcpy(&s->fill[s->nfill++], &r, sizeof r);
		if (s->nfill == s->opt.batch && !s->wake) {
			s->wake = 1;
			pthread_cond_signal(&s->cv);
		}
	}
	pthread_mutex_unlock(&s->mu);
}

long long quasim_spans_next_iteration(quasim_spans *s)
{
	if (!s)
		return 0;
	pthread_mutex_lock(&s->mu);
	long long it = ++s->iteration;
	s->wake = 1;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return it;
}

void quasim_spans_stats(quasim_spans *s, quasim_span_stats *out)
{
	if (!s) {
		memset(out, 0, sizeof *out);
		return;
	}
	pthread_mutex_lock(&s->mu);
	*out = s->st;
	pthread_mutex_unlock(&s->mu);
}

/* A growing buffer for a request body; oom is set when it could not grow. */
struct sbuf {
	char *p;
	size_t n, cap;
	int oom;
};

static void sb_put(struct sbuf *b, const char *src, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->n + n + 1)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->oom = 1;
			return;
		}
		b->p = p, b->cap = cap;
	}
	memcpy(b->p + b->n, src, n);
	b->n += n;
	b->p[b->n] = 0;
}

static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n > 0)
		sb_put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* sb_str appends src as a JSON string. */
static void sb_str(struct sbuf *b, const char *src)
{
	sb_put(b, "\"", 1);
	for (const unsigned char *c = (const unsigned char *)src; *c; c++) {
		if (*c == '"' || *c == '\\') {
			char e[2] = {'\\', (char)*c};
			sb_put(b, e, 2);
		} else if (*c < 0x20) {
			sb_printf(b, "\\u%04x", *c);
		} else {
			sb_put(b, (const char *)c, 1);
		}
	}
	sb_put(b, "\"", 1);
}

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
	return (x > y) - (x < y);
}

/* spans_json writes recs as the JSON array POST /v1/spans takes, keeping
 * only the deps on spans among them; *cut counts the others. */
static void spans_json(const quasim_spans *s, const struct span_rec *recs, int n, struct sbuf *b, int *cut)
{
	unsigned long long *ids = malloc((size_t)n * sizeof *ids);
	if (!ids) {
		b->oom = 1;
		return;
	}
	for (int i = 0; i < n; i++)
		ids[i] = recs[i].id;
	qsort(ids, (size_t)n, sizeof *ids, cmp_ull);
	*cut = 0;
	sb_put(b, "[", 1);
	for (int i = 0; i < n; i++) {
		const struct span_rec *r = &recs[i];
		sb_printf(b, "%s{\"id\":%llu,\"pipeline\":", i ? "," : "", r->id);
		sb_str(b, s->pipeline);
		sb_printf(b, ",\"iteration\":%lld,\"kernel\":", r->iteration);
		sb_str(b, r->kernel);
		sb_put(b, ",\"problem\":", 11);
		sb_str(b, r->problem);
		sb_put(b, ",\"device\":", 10);
		sb_str(b, s->device);
		sb_put(b, ",\"stream\":", 10);
		sb_str(b, r->stream);
		sb_printf(b, ",\"start_ns\":%lld,\"end_ns\":%lld,\"deps\":[", r->start, r->end);
		int k = 0;
		for (int d = 0; d < r->ndeps; d++) {
			if (r->deps[d] == r->id || !bsearch(&r->deps[d], ids, (size_t)n, sizeof *ids, cmp_ull)) {
				++*cut;
				continue;
			}
			sb_printf(b, "%s%llu", k++ ? "," : "", r->deps[d]);
		}
		sb_put(b, "]}", 2);
	}
	sb_put(b, "]", 1);
	free(ids);
}

enum { POSTED, RETRY };

/* post sends recs as one batch by deadline_ms and counts what became of
 * them, except after RETRY (quasimd away or rate-limiting: the caller keeps
 * them, and s->hold_ms says when to try again). A batch over quasimd's size
 * limit is sent again in halves. Called with send_mu held. */
static int post(quasim_spans *s, const struct span_rec *recs, int n, long long deadline_ms)
{
	struct sbuf b = {0};
	int cut = 0;
	spans_json(s, recs, n, &b, &cut);
	char req[256], why[256], msg[200];
	int rn = snprintf(req, sizeof req,
	                  "POST /v1/spans HTTP/1.0\r\nHost: quasimd\r\nAccept: application/json\r\n"
	                  "Content-Type: application/json\r\nContent-Length: %lu\r\n\r\n",
	                  (unsigned long)b.n);
	char *buf = NULL, *body = NULL;
	size_t len = 0;
	int status;
	if (b.oom) {
		status = -1;
		say(why, sizeof why, "out of memory");
	} else {
		status = exchange(s->q, req, (size_t)rn, b.p, b.n, deadline_ms, &buf, &len, &body, why, sizeof why);
		if (status < 0 && !strcmp(why, "timeout"))
			say(why, sizeof why, "quasimd did not answer within %d ms", s->opt.timeout_ms);
	}
	free(b.p);
	int rc = POSTED;
	if (status == 413 && n > 1) {
		free(buf);
		for (int part = 0; part < 2; part++) {
			int off = part ? n / 2 : 0, m = part ? n - n / 2 : n / 2;
			if (post(s, recs + off, m, deadline_ms) == RETRY) {
				pthread_mutex_lock(&s->mu);
				s->st.unsent += (unsigned long long)m;
				pthread_mutex_unlock(&s->mu);
			}
		}
		return POSTED;
	}
	if (status >= 200 && status <= 299) {
		pthread_mutex_lock(&s->mu);
		s->st.sent += (unsigned long long)n;
		s->st.batches++;
		s->st.deps_dropped += (unsigned long long)cut;
		pthread_mutex_unlock(&s->mu);
		s->backoff_ms = 0;
		free(buf);
		return POSTED;
	}
	if (status == 429 || status < 0) {
		char ra[32] = "";
		if (status == 429) {
			header(buf, body, "Retry-After", ra, sizeof ra);
			error_message(body, buf + len, msg, sizeof msg);
			say(why, sizeof why, "quasimd: HTTP 429: %s", msg);
		}
		long secs = ra[0] ? strtol(ra, NULL, 10) : 0;
		if (secs > 0) {
			s->hold_ms = now_ms() + secs * 1000;
		} else {
			s->backoff_ms = s->backoff_ms ? s->backoff_ms * 2 : s->opt.interval_ms;
			if (s->backoff_ms > 30000)
				s->backoff_ms = 30000;
			s->hold_ms = now_ms() + s->backoff_ms;
		}
		rc = RETRY;
	}
	if (status > 0 && status != 429) {
		error_message(body, buf + len, msg, sizeof msg);
		say(why, sizeof why, "quasimd: HTTP %d: %s", status, msg);
	}
	free(buf);
	pthread_mutex_lock(&s->mu);
	if (rc != RETRY) {
		s->st.rejected += (unsigned long long)n;
		s->st.deps_dropped += (unsigned long long)cut;
	}
	copy(s->st.last_error, sizeof s->st.last_error, why);
	pthread_mutex_unlock(&s->mu);
	return rc;
}

/* cmp_rec orders spans as they are sent: by iteration, then id. */
static int cmp_rec(const void *a, const void *b)
{
	const struct span_rec *x = a, *y = b;
	if (x->iteration != y->iteration)
		return x->iteration < y->iteration ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

/* batch_len is how many of recs go in the next batch: whole iterations
 * while they fit in limit, else limit. */
static int batch_len(const struct span_rec *recs, int n, int limit)
{
	int k = 0;
	while (k < n) {
		int end = k + 1;
		while (end < n && recs[end].iteration == recs[k].iteration)
			end++;
		if (end <= limit)
			k = end;
		else
			return k ? k : limit;
	}
	return k;
}

/* send_step takes the spans that have ended and sends what is ready: all
 * of them when all is set (a flush, or the close, by deadline_ms), else
 * the ended iterations (finished, all their spans ended; in order) and, of
 * the others, full batches, or all once the oldest has waited interval_ms;
 * at most a request per
 * interval_ms/4 unless a full batch waits. 0 when nothing is left for a
 * retry, -1 otherwise. */
static int send_step(quasim_spans *s, int all, long long deadline_ms)
{
	pthread_mutex_lock(&s->send_mu);
	pthread_mutex_lock(&s->mu);
	struct span_rec *got = s->fill;
	int n = s->nfill;
	s->fill = s->spare, s->nfill = 0;
	long long cur = s->iteration;
	/* rel: the first iteration from released on, before cur, with a span
	 * still open (cur when none): iterations go whole and in order. */
	long long rel = s->released > cur - OPEN_SLOTS + 1 ? s->released : cur - OPEN_SLOTS + 1;
	while (rel < cur && s->open[rel % OPEN_SLOTS] <= 0)
		rel++;
	pthread_mutex_unlock(&s->mu);
	s->spare = got;
	int room = s->opt.capacity - s->npending;
	if (n > room) {
		pthread_mutex_lock(&s->mu);
		s->st.unsent += (unsigned long long)(n - room);
		pthread_mutex_unlock(&s->mu);
		n = room;
	}
	memcpy(s->pending + s->npending, got, (size_t)n * sizeof *got);
	s->npending += n;
	int np = s->npending, k = 0, rc = 0;
	if (np == 0 || (!all && now_ms() < s->hold_ms))
		goto out;
	qsort(s->pending, (size_t)np, sizeof *s->pending, cmp_rec);
	while (k < np && s->pending[k].iteration < rel)
		k++;
	if (all) {
		k = np, rel = cur;
	} else if (k < np) {
		long long oldest = s->pending[k].end;
		for (int i = k + 1; i < np; i++)
			if (s->pending[i].end < oldest)
				oldest = s->pending[i].end;
		if (mono_ns() + s->offset_ns - oldest >= (long long)s->opt.interval_ms * 1000000)
			k = np, rel = cur;
		else if (np - k >= s->opt.batch)
			k += (np - k) / s->opt.batch * s->opt.batch;
	}
	/* Requests at least interval_ms/4 apart unless a full batch waits:
	 * fast iterations share batches, under quasimd's per-uid rate. */
	if (!all && k < s->opt.batch && now_ms() - s->last_ms < s->opt.interval_ms / 4)
		k = 0;
	if (k > 0) {
		s->last_ms = now_ms();
		if (rel > s->released)
			s->released = rel;
	}
	int done = 0;
	while (done < k) {
		int m = batch_len(s->pending + done, k - done, s->opt.batch);
		long long dl = now_ms() + s->opt.timeout_ms;
		if (deadline_ms && deadline_ms < dl)
			dl = deadline_ms;
		if (post(s, s->pending + done, m, dl) == RETRY) {
			rc = -1;
			break;
		}
		done += m;
	}
	memmove(s->pending, s->pending + done, (size_t)(np - done) * sizeof *s->pending);
	s->npending = np - done;
out:
	pthread_mutex_unlock(&s->send_mu);
	return rc;
}

int quasim_spans_flush(quasim_spans *s)
{
	if (!s)
		return -1;
	return send_step(s, 1, 0);
}

static void *sender(void *arg)
{
	quasim_spans *s = arg;
	pthread_mutex_lock(&s->mu);
	for (;;) {
		if (!s->wake && !s->closing) {
			struct timespec ts;
			long long at = mono_ns() + (long long)s->opt.interval_ms * 250000; /* a quarter of the interval */
			ts.tv_sec = (time_t)(at / 1000000000), ts.tv_nsec = (long)(at % 1000000000);
			pthread_cond_timedwait(&s->cv, &s->mu, &ts);
		}
		int closing = s->closing;
		long long deadline = s->close_deadline_ms;
		s->wake = 0;
		pthread_mutex_unlock(&s->mu);
		send_step(s, closing, closing ? deadline : 0);
		if (closing)
			return NULL;
		pthread_mutex_lock(&s->mu);
	}
}

quasim_spans *quasim_spans_open(const char *socket_path, const char *pipeline, const char *device,
                                const quasim_span_options *opt)
{
	if (!pipeline || !*pipeline)
		return NULL;
	quasim_spans *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	if (opt)
		s->opt = *opt;
	if (s->opt.capacity <= 0)
		s->opt.capacity = 1024;
	if (s->opt.batch <= 0)
		s->opt.batch = 512;
	if (s->opt.batch > s->opt.capacity)
		s->opt.batch = s->opt.capacity;
	if (s->opt.interval_ms <= 0)
		s->opt.interval_ms = 1000;
	if (s->opt.timeout_ms <= 0)
		s->opt.timeout_ms = 2000;
	copy(s->pipeline, sizeof s->pipeline, pipeline);
	copy(s->device, sizeof s->device, device ? device : "");
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	s->offset_ns = (long long)rt.tv_sec * 1000000000LL + rt.tv_nsec - mono_ns();
	size_t bytes = (size_t)s->opt.capacity * sizeof(struct span_rec);
	s->q = quasim_open(socket_path, s->opt.timeout_ms, 0);
	s->fill = malloc(bytes), s->spare = malloc(bytes), s->pending = malloc(bytes);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	int ok = s->q && s->fill && s->spare && s->pending && !pthread_mutex_init(&s->mu, NULL) &&
	         !pthread_mutex_init(&s->send_mu, NULL) && !pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (ok && !s->opt.no_thread)
		ok = s->has_thread = !pthread_create(&s->thread, NULL, sender, s);
	if (!ok) {
		quasim_close(s->q);
		free(s->fill), free(s->spare), free(s->pending), free(s);
		return NULL;
	}
	return s;
}

int quasim_spans_close(quasim_spans *s, int timeout_ms, quasim_span_stats *final)
{
	if (!s) {
		if (final)
			memset(final, 0, sizeof *final);
		return 0;
	}
	long long deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : s->opt.timeout_ms);
	pthread_mutex_lock(&s->mu);
	s->closing = 1;
	s->close_deadline_ms = deadline;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
	if (s->has_thread)
		pthread_join(s->thread, NULL);
	else
		send_step(s, 1, deadline);
	/* What is still here could not be sent in time. */
	pthread_mutex_lock(&s->mu);
	s->st.unsent += (unsigned long long)(s->npending + s->nfill);
	quasim_span_stats st = s->st;
	pthread_mutex_unlock(&s->mu);
	if (final)
		*final = st;
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	pthread_mutex_destroy(&s->send_mu);
	quasim_close(s->q);
	free(s->fill), free(s->spare), free(s->pending), free(s);
	return st.sent == st.ended ? 0 : -1;
}
