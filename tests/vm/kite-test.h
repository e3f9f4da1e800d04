/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the libibverbs test programs of tests/vm: kite-rc
 * (kite-rc*.c) and kite-ud (kite-ud.c), the two-guest tests, use all of it
 * (result lines in the tests/vm format, the overall time limit, the TCP
 * side channel between the two sides and the seeded byte pattern);
 * kite-verbs (kite-verbs*.c) its clock. Everything is static inline with
 * explicit parameters (each program keeps its own state);
 * scripts/mkinitramfs.sh builds the programs with this directory on the
 * include path and hashes every file in it.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef KITE_TEST_H
#define KITE_TEST_H

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

/* Soft-RoCE's vendor_id (ibv_query_device): the baseline of the checks. */
#define KT_RXE_VENDOR_ID	0xffffffu

/* ---- reporting ------------------------------------------------------------ */

/*
 * Append a failure to DETAIL (SIZE bytes, "" = passed so far): the first
 * one as it is, later ones after "; ", nothing once DETAIL is nearly full.
 */
static inline void kt_vbad(char *detail, size_t size, const char *fmt, va_list ap)
{
	size_t l = strlen(detail);

	if (l >= size - 8)
		return;
	if (l) {
		strcat(detail, "; ");
		l += 2;
	}
	vsnprintf(detail + l, size - l, fmt, ap);
}

/* Print one result line "ok|FAIL|skip PREFIX-NAME[: DETAIL]". */
static inline void kt_report(const char *prefix, int *failures, const char *name,
			     int failed, int skipped, const char *detail)
{
	if (failed) {
		printf("FAIL %s-%s: %s\n", prefix, name, detail);
		(*failures)++;
	} else if (skipped) {
		printf("skip %s-%s: %s\n", prefix, name, detail);
	} else {
		printf("ok %s-%s\n", prefix, name);
	}
	fflush(stdout);
}

static inline void info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* An information line ("# ..."). */
static inline void info(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* ---- time ----------------------------------------------------------------- */

static const char *kt_alarm_msg;
static size_t kt_alarm_len;

static inline void kt_on_alarm(int sig)
{
	(void)sig;
	if (write(1, kt_alarm_msg, kt_alarm_len) < 0)
		_exit(1);
	_exit(1);
}

/* After SECONDS, print MSG (a whole FAIL line) and exit with status 1. */
static inline void kt_alarm(unsigned int seconds, const char *msg)
{
	kt_alarm_msg = msg;
	kt_alarm_len = strlen(msg);
	signal(SIGALRM, kt_on_alarm);
	alarm(seconds);
}

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* ---- TCP ------------------------------------------------------------------ */

/* Send or receive exactly LEN bytes on SOCK: 0, or -1 when the link broke. */
static inline int kt_tcp_io(int sock, void *p, size_t len, int do_send)
{
	uint8_t *b = p;

	while (len) {
		ssize_t n = do_send ? send(sock, b, len, MSG_NOSIGNAL) :
				      recv(sock, b, len, 0);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return -1;
		}
		b += n;
		len -= n;
	}
	return 0;
}

/* Swap LEN bytes with the peer: the client sends first. */
static inline int kt_xchg(int sock, int server, const void *mine, void *theirs, size_t len)
{
	if (server)
		return kt_tcp_io(sock, theirs, len, 0) ||
		       kt_tcp_io(sock, (void *)mine, len, 1) ? -1 : 0;
	return kt_tcp_io(sock, (void *)mine, len, 1) ||
	       kt_tcp_io(sock, theirs, len, 0) ? -1 : 0;
}

/* Rendezvous: both sides pass the same tag. 0, or -1 when out of step. */
static inline int kt_sync_peer(int sock, int server, uint32_t tag)
{
	uint32_t t = htonl(tag), theirs;

	if (kt_xchg(sock, server, &t, &theirs, sizeof(t)))
		return -1;
	return theirs == t ? 0 : -1;
}

/*
 * The TCP link to the peer: the server (HOST NULL) accepts one connection
 * on PORT (bounded by the alarm), the client connects to HOST's PORT,
 * retrying for up to 60 s. Reads and writes then time out after
 * TIMEOUT_S seconds. The socket, or -1.
 */
static inline int kt_tcp_connect(const char *host, int port, int timeout_s)
{
	struct timeval tv = { .tv_sec = timeout_s };
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res, *r;
	char portstr[16];
	int one = 1, fd = -1, tries;

	snprintf(portstr, sizeof(portstr), "%d", port);
	if (!host) {
		struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_port = htons(port),
					  .sin6_addr = IN6ADDR_ANY_INIT };
		int ls = socket(AF_INET6, SOCK_STREAM, 0);

		if (ls < 0)
			return -1;
		setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 1)) {
			close(ls);
			return -1;
		}
		/* accept() is bounded by the alarm. */
		fd = accept(ls, NULL, NULL);
		close(ls);
	} else {
		if (getaddrinfo(host, portstr, &hints, &res))
			return -1;
		/* The server may not listen yet: retry for up to 60 s. */
		for (tries = 0; tries < 240 && fd < 0; tries++) {
			for (r = res; r; r = r->ai_next) {
				fd = socket(r->ai_family, r->ai_socktype, 0);
				if (fd < 0)
					continue;
				if (!connect(fd, r->ai_addr, r->ai_addrlen))
					break;
				close(fd);
				fd = -1;
			}
			if (fd < 0)
				usleep(250000);
		}
		freeaddrinfo(res);
	}
	if (fd < 0)
		return -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return fd;
}

/* ---- device ------------------------------------------------------------- */

/*
 * Open the device named DEV (NULL: the first one). On failure, ERR (the
 * program's bad()) gets the reason, NOTFOUND (a format with one %s, DEV)
 * when there is no such device, and NULL comes back.
 */
static inline struct ibv_context *kt_open_device(const char *dev, const char *notfound,
						 void (*err)(const char *fmt, ...))
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list || !n) {
		err("no RDMA device");
		return NULL;
	}
	for (i = 0; i < n; i++)
		if (!dev || !strcmp(ibv_get_device_name(list[i]), dev))
			break;
	if (i == n) {
		err(notfound, dev);
		ibv_free_device_list(list);
		return NULL;
	}
	ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx)
		err("ibv_open_device: %s", strerror(errno));
	return ctx;
}

/* ---- byte pattern --------------------------------------------------------- */

/* Byte I of the pattern SEED. */
static inline uint8_t pat(uint32_t seed, uint32_t i)
{
	uint32_t x = seed * 2654435761u + i * 40503u;

	x ^= x >> 13;
	x *= 0x5bd1e995u;
	return (uint8_t)(x ^ (x >> 15));
}

static inline void fill(uint8_t *p, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = pat(seed, i);
}

/* Offset of the first byte differing from the pattern, or -1. */
static inline long verify(const uint8_t *p, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != pat(seed, i))
			return (long)i;
	return -1;
}

#endif /* KITE_TEST_H */
