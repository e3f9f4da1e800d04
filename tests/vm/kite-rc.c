// SPDX-License-Identifier: GPL-2.0
/*
 * RC data path checks through plain libibverbs, run in guests (built on the
 * host against out/rdma-core by scripts/mkinitramfs.sh and installed as
 * /usr/bin/kite-rc). Works on any RoCE device: the VM suite runs it over
 * Kite and over Soft-RoCE (rxe) alike.
 *
 *   kite-rc [OPTIONS] MODE            server: listen on the TCP port
 *   kite-rc [OPTIONS] MODE HOST       client: connect to HOST's server
 *   kite-rc count MODE                print how many results MODE prints
 *
 * MODE "func": every RC opcode with its data verified (SEND, SEND with
 * immediate, inline SEND, SEND with an SGE list, RDMA WRITE, WRITE with
 * immediate, RDMA READ, CMP_SWP, FETCH_ADD) and every error completion
 * (bad lkey -> LOC_PROT_ERR, bad rkey and an MR without remote access ->
 * REM_ACCESS_ERR with the target untouched, RNR with rnr_retry 0 ->
 * RNR_RETRY_EXC_ERR, peer QP destroyed -> RETRY_EXC_ERR, QP moved to ERR ->
 * WR_FLUSH_ERR for outstanding receives and a later send, in order).
 * MODE "bulk": -n N (default 10000) RDMA WRITE + SEND message pairs of mixed
 * sizes (seeded, -S), each SEND carrying its index: the server checks that
 * every SEND arrives exactly once and in order, and every byte of each SEND
 * and of each WRITE it announces.
 * MODE "mixed": -n N (default 10000) messages, each a SEND, an RDMA WRITE or
 * an RDMA READ of 1 B to 1 MiB (seeded, -S; log-uniform by octave, both
 * ends of the range for each opcode included), pipelined, every byte
 * verified, every completion checked once and in posting order, every SEND
 * received once and in order (see "mixed" below). The client prints its
 * throughput and totals as "#" lines. Its buffers take 24 MiB per side.
 * MODE "mw": memory windows and re-registration (kite-rc-mw.c): the
 * server binds windows of type 1 and 2B on its memory, the client
 * accesses them (inside, outside, against the rights, after invalidation
 * by LOCAL_INV or SEND_WITH_INV, with an old key); deregistering an MR
 * with a bound window; ibv_rereg_mr of translation and rights.
 * MODE "ex": the traffic of "func" through the extended verbs
 * (kite-rc-ex.c): ibv_create_qp_ex with the ibv_wr_* batches,
 * ibv_create_cq_ex polled with ibv_start_poll; on Kite also the
 * refusals of what the device cannot do.
 *
 * The two sides exchange QP numbers, PSNs, GIDs, addresses and keys over TCP
 * (as ibv_rc_pingpong does) and run the same list of checks in lock step;
 * error checks use a fresh QP pair each. The server sends its findings to
 * the client after every check; only the client prints results, one line
 * each in the tests/vm format ("ok NAME", "FAIL NAME: detail", "skip NAME:
 * why"), so a run prints exactly "kite-rc count MODE" results whatever
 * happens (checks that cannot run any more are printed as FAIL). Lines
 * starting with "#" are information. Everything is bounded in time: CQ
 * polls, TCP reads (-t sets the overall limit, default 600 s; an alarm
 * ends the process after it).
 *
 * Options: -d DEV (default: first device), -g GID_INDEX (default 0),
 * -p TCP_PORT (default 18600), -n COUNT, -S SEED, -t SECONDS,
 * -P PREFIX (result names, default "rc"), -T QP_TIMEOUT (local ACK timeout
 * exponent of the main QP pair, default 14: 4.096 us << 14 = 67 ms).
 * Exit status 0 when every check passed, 1 otherwise, 2 on bad usage.
 *
 * This file holds the harness (state, result lines, the TCP side channel,
 * main); the QP helpers and each mode have their own (see kite-rc.h).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>

#include "kite-rc.h"

#define TCP_TIMEOUT_S	120

/* What the server found in one check, sent to the client. */
struct result {
	uint32_t test, failed, main_err, skipped;
	char detail[240];
};

const struct conn_opts def_opts = { 14, 7, 7, 1 };

struct rc_state g = {
	.prefix = "rc", .port = 18600, .timeout_s = 600, .count = 10000,
	.seed = 1, .sock = -1, .buf_size = BUF_SIZE, .qp_timeout = -1,
};

struct pair main_pair;
int fatal;
static int main_ok, main_dead;

/* ---- reporting ------------------------------------------------------------ */

/* Record this check's first failure (later ones are appended, shortened). */
void bad(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kt_vbad(g.detail, sizeof(g.detail), fmt, ap);
	va_end(ap);
}

/* This check cannot run here (a limit of one side's device); say why. */
void skip_check(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(g.skip_why, sizeof(g.skip_why), fmt, ap);
	va_end(ap);
}

static void report(const char *name, int failed, int skipped,
		   const char *detail)
{
	kt_report(g.prefix, &g.failures, name, failed, skipped, detail);
}

/* ---- TCP ------------------------------------------------------------------ */

int tcp_io(void *p, size_t len, int do_send)
{
	return kt_tcp_io(g.sock, p, len, do_send);
}

int xchg(const void *mine, void *theirs, size_t len)
{
	return kt_xchg(g.sock, g.server, mine, theirs, len);
}

/* The peer has sent something we have not read yet (it moved on). */
int peer_moved_on(void)
{
	struct pollfd pfd = { .fd = g.sock, .events = POLLIN };

	return g.sock >= 0 && poll(&pfd, 1, 0) == 1;
}

/*
 * Rendezvous that also tells whether either side has failed this check
 * so far: 0 both fine, 1 someone failed (stop the check on both sides), -1
 * TCP broke.
 */
int sync_ok(uint32_t tag)
{
	uint32_t mine[2] = { htonl(tag), htonl(g.detail[0] != '\0') }, theirs[2];

	if (xchg(mine, theirs, sizeof(mine)) || theirs[0] != mine[0])
		return -1;
	return mine[1] || theirs[1] ? 1 : 0;
}

/* Rendezvous: both sides pass the same tag. */
int sync_peer(uint32_t tag)
{
	return kt_sync_peer(g.sock, g.server, tag);
}

static int tcp_connect(void)
{
	g.sock = kt_tcp_connect(g.host, g.port, TCP_TIMEOUT_S);
	return g.sock < 0 ? -1 : 0;
}


/*
 * Run one check on both sides, then the server sends what it found; the
 * client prints the result. -1 when the TCP connection broke.
 */
static int run_check(uint32_t idx, const char *name, void (*fn)(void), int skip_why_main)
{
	struct result mine = { .test = htonl(idx) }, theirs;
	char detail[600];

	g.detail[0] = '\0';
	g.skip_why[0] = '\0';
	if (sync_peer(0x1000 + idx)) {
		bad("lost step with the peer");
		return -1;
	}
	if (!g.mr)
		bad("not run: the device could not be opened");
	else if (skip_why_main && main_dead)
		bad("not run: the main QP pair went to ERR in an earlier check");
	else if (skip_why_main)
		bad("not run: the main QP pair could not be set up");
	else
		fn();
	if (fatal)
		return -1;
	mine.failed = htonl(g.detail[0] != '\0');
	mine.skipped = htonl(g.skip_why[0] != '\0');
	if (main_ok && main_pair.qp) {
		struct ibv_qp_attr qa;
		struct ibv_qp_init_attr qia;

		mine.main_err = htonl(!ibv_query_qp(main_pair.qp, &qa, IBV_QP_STATE, &qia) &&
				      qa.qp_state == IBV_QPS_ERR);
	}
	snprintf(mine.detail, sizeof(mine.detail), "%s",
		 g.detail[0] ? g.detail : g.skip_why);
	if (xchg(&mine, &theirs, sizeof(mine)) || theirs.test != mine.test)
		return -1;
	/* A main QP in ERR makes the later checks on it pointless. */
	if (main_ok && (mine.main_err || theirs.main_err)) {
		main_ok = 0;
		main_dead = 1;
	}
	if (!g.server) {
		int failed = g.detail[0] || ntohl(theirs.failed);

		theirs.detail[sizeof(theirs.detail) - 1] = '\0';
		if (failed)
			snprintf(detail, sizeof(detail), "%s%s%s%s", g.detail,
				 g.detail[0] && ntohl(theirs.failed) ? "; " : "",
				 ntohl(theirs.failed) ? "server: " : "",
				 ntohl(theirs.failed) ? theirs.detail : "");
		else
			snprintf(detail, sizeof(detail), "%s",
				 g.skip_why[0] ? g.skip_why : theirs.detail);
		report(name, failed, !failed && (g.skip_why[0] ||
						 ntohl(theirs.skipped)), detail);
	} else if (g.detail[0]) {
		g.failures++;
	}
	return 0;
}

/* ---- seeded random numbers (bulk, mixed) ------------------------------------ */

static uint32_t rng_state;

/* Start the sequence the seed (-S) gives: both sides draw the same. */
void rnd_seed(void)
{
	rng_state = g.seed ? g.seed : 1;
}

uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

/* ---- main ------------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr, "usage: kite-rc [-d DEV] [-g GID_INDEX] [-p PORT] [-n COUNT] [-S SEED]\n"
		"               [-t SECS] [-P PREFIX] [-T QP_TIMEOUT] func|bulk|mixed|mw|ex [HOST]\n"
		"       kite-rc count func|bulk|mixed|mw|ex\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct ibv_qp_init_attr qia;
	struct ibv_qp_attr qa;
	struct conn_opts main_opts = def_opts;
	const struct check *checks = func_checks;
	const char *mode;
	int opt, bulk, mixed;
	uint32_t i, n;

	if (argc == 3 && !strcmp(argv[1], "count")) {
		if (!strcmp(argv[2], "func"))
			printf("%zu\n", nfunc);
		else if (!strcmp(argv[2], "mw"))
			printf("%zu\n", nmw);
		else if (!strcmp(argv[2], "ex"))
			printf("%zu\n", nex);
		else if (!strcmp(argv[2], "bulk") || !strcmp(argv[2], "mixed"))
			printf("1\n");
		else
			usage();
		return 0;
	}
	while ((opt = getopt(argc, argv, "d:g:p:n:S:t:P:T:")) != -1) {
		switch (opt) {
		case 'd': g.dev = optarg; break;
		case 'g': g.gid_index = atoi(optarg); break;
		case 'p': g.port = atoi(optarg); break;
		case 'n': g.count = strtoul(optarg, NULL, 0); break;
		case 'S': g.seed = strtoul(optarg, NULL, 0); break;
		case 't': g.timeout_s = atoi(optarg); break;
		case 'P': g.prefix = optarg; break;
		case 'T': g.qp_timeout = atoi(optarg); break;
		default: usage();
		}
	}
	if (optind >= argc || argc - optind > 2)
		usage();
	mode = argv[optind];
	if (strcmp(mode, "func") && strcmp(mode, "bulk") && strcmp(mode, "mixed") &&
	    strcmp(mode, "mw") && strcmp(mode, "ex"))
		usage();
	if (g.qp_timeout > 31)
		usage();
	if (g.qp_timeout >= 0)
		main_opts.timeout = g.qp_timeout;
	bulk = !strcmp(mode, "bulk");
	mixed = !strcmp(mode, "mixed");
	if (mixed)
		g.buf_size = mixed_buf_size;
	g.host = optind + 1 < argc ? argv[optind + 1] : NULL;
	g.server = !g.host;
	n = bulk || mixed ? 1 : nfunc;
	if (!strcmp(mode, "mw")) {
		checks = mw_checks;
		n = nmw;
	}
	if (!strcmp(mode, "ex")) {
		checks = ex_checks;
		n = nex;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	kt_alarm(g.timeout_s, "FAIL rc-time-limit: kite-rc ran past its time limit (-t)\n");

	g.detail[0] = '\0';
	if (tcp_connect()) {
		snprintf(g.detail, sizeof(g.detail), "no TCP connection to %s port %d: %s",
			 g.host ? g.host : "(listening)", g.port, strerror(errno));
		goto all_failed;
	}
	/* Main pair: both sides always exchange, even after a local failure. */
	if (!open_device() && !pair_create(&main_pair, INLINE_SIZE)) {
		if (ibv_query_qp(main_pair.qp, &qa, IBV_QP_CAP, &qia) == 0)
			g.max_inline = qa.cap.max_inline_data;
	} else if (g.mr && !main_pair.qp) {
		/* No inline support? The inline check will say so. */
		pair_destroy(&main_pair);
		g.detail[0] = '\0';
		if (!pair_create(&main_pair, 0))
			g.max_inline = 0;
	}
	if (pair_exchange(&main_pair)) {
		bad("TCP exchange with the peer failed");
		goto all_failed;
	}
	main_ok = main_pair.qp && main_pair.peer.qpn && !g.detail[0] &&
		  !pair_connect(&main_pair, &main_opts, 0);
	{
		/* Both sides must agree that the main pair works. */
		uint32_t mine = htonl(main_ok), theirs;

		if (xchg(&mine, &theirs, sizeof(mine))) {
			bad("TCP exchange with the peer failed");
			goto all_failed;
		}
		if (main_ok && !theirs)
			bad("the peer could not set up its QP");
		main_ok = main_ok && theirs;
	}
	if (!main_ok)
		info("main QP pair not usable: %s", g.detail);
	if (g.server)
		info("kite-rc server on %s, gid index %d, mtu %d", g.dev ? g.dev : "(first)",
		     g.gid_index, 128 << g.mtu);

	for (i = 0; i < n; i++) {
		const char *name = bulk || mixed ? mode : checks[i].name;
		void (*fn)(void) = bulk ? t_bulk : mixed ? t_mixed : checks[i].fn;
		int needs = bulk || mixed || checks[i].needs_main;

		if (run_check(i, name, fn, needs && !main_ok)) {
			if (!g.server)
				report(name, 1, 0, g.detail[0] ? g.detail : "lost the peer (TCP)");
			i++;
			snprintf(g.detail, sizeof(g.detail), "not run: lost the peer earlier");
			for (; i < n; i++)
				if (!g.server)
					report(bulk || mixed ? mode : checks[i].name, 1,
					       0, g.detail);
			return 1;
		}
	}
	pair_destroy(&main_pair);
	if (g.mr)
		ibv_dereg_mr(g.mr);
	if (g.noacc)
		ibv_dereg_mr(g.noacc);
	if (g.pd)
		ibv_dealloc_pd(g.pd);
	if (g.ctx)
		ibv_close_device(g.ctx);
	close(g.sock);
	return g.failures ? 1 : 0;

all_failed:
	if (!g.server)
		for (i = 0; i < n; i++)
			report(bulk || mixed ? mode : checks[i].name, 1, 0, g.detail);
	else
		fprintf(stderr, "kite-rc server: %s\n", g.detail);
	return 1;
}
