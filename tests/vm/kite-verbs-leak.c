// SPDX-License-Identifier: GPL-2.0
/*
 * kite-verbs' leak loops: create/destroy cycles of CQs, QPs, MRs and PDs,
 * with the device's object counts, rdma restrack's counts, this process's
 * pinned memory and the kernel's kmalloc slab objects compared before and
 * after (and the slab measurement shown to find a leak).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kite-verbs.h"

#define LEAK_CYCLES	1000
#define LEAK_BIG_CYCLES	200
#define LEAK_BIG_MR	(256ul << 20)
#define RDMA_TOOL	"/usr/bin/rdma"
/* hw_counters are cached for RDMA_HW_STATS_DEFAULT_LIFESPAN (10 ms). */
#define STATS_SETTLE_US	50000

struct counts {
	long hw_cq, hw_qp, hw_mr;	/* device (hw_counters), -1: none */
	long rd_pd, rd_cq, rd_qp, rd_mr;	/* rdma resource show, -1: none */
	long pinned_kb;			/* VmPin of this process */
};

static long hw_counter(const char *dev, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters/%s", dev, name);
	return read_long(path);
}

static long token_after(const char *line, const char *key)
{
	char k[16];
	const char *p;

	snprintf(k, sizeof(k), " %s ", key);
	p = strstr(line, k);
	return p ? strtol(p + strlen(k), NULL, 10) : -1;
}

static void get_counts(const char *dev, struct counts *c)
{
	char cmd[128], line[512];
	FILE *f;

	usleep(STATS_SETTLE_US);
	c->hw_cq = hw_counter(dev, "num_cq");
	c->hw_qp = hw_counter(dev, "num_qp");
	c->hw_mr = hw_counter(dev, "num_mr");
	c->rd_pd = c->rd_cq = c->rd_qp = c->rd_mr = -1;
	snprintf(cmd, sizeof(cmd), RDMA_TOOL " resource show %s 2>/dev/null", dev);
	f = popen(cmd, "r");
	if (f) {
		while (fgets(line, sizeof(line), f)) {
			if (!strstr(line, dev))
				continue;
			c->rd_pd = token_after(line, "pd");
			c->rd_cq = token_after(line, "cq");
			c->rd_qp = token_after(line, "qp");
			c->rd_mr = token_after(line, "mr");
		}
		pclose(f);
	}
	c->pinned_kb = -1;
	f = fopen("/proc/self/status", "r");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "VmPin:", 6))
				c->pinned_kb = strtol(line + 6, NULL, 10);
		fclose(f);
	}
}

/*
 * Differences between snapshots A and B into BAD: B holds DCQ/DQP/DMR more
 * CQs/QPs/MRs, and more pinned memory when PIN (else the same).
 */
static void diff_counts(const struct counts *a, const struct counts *b,
			long dcq, long dqp, long dmr, int pin, char *bad,
			size_t len)
{
#define CMP(f, d)							\
	do {								\
		if (a->f < 0 || b->f < 0)				\
			snprintf(bad + strlen(bad), len - strlen(bad),	\
				 " %s unreadable", #f);			\
		else if (b->f != a->f + (d))				\
			snprintf(bad + strlen(bad), len - strlen(bad),	\
				 " %s %ld -> %ld (want %+ld)", #f,	\
				 a->f, b->f, (long)(d));		\
	} while (0)
	CMP(hw_cq, dcq);
	CMP(hw_qp, dqp);
	CMP(hw_mr, dmr);
	CMP(rd_pd, 0);
	CMP(rd_cq, dcq);
	CMP(rd_qp, dqp);
	CMP(rd_mr, dmr);
	if (!pin)
		CMP(pinned_kb, 0);
	else if (b->pinned_kb <= a->pinned_kb)
		snprintf(bad + strlen(bad), len - strlen(bad),
			 " VmPin %ld -> %ld kB (want more)", a->pinned_kb,
			 b->pinned_kb);
#undef CMP
}

/*
 * Kernel slab objects: active objects of every kmalloc cache, read from
 * /proc/slabinfo after dropping the page cache and shrinking the cache
 * (which flushes the per-CPU slabs, so that free objects are no longer
 * counted as active), after a pause for RCU-deferred frees. What is left
 * is slab granularity: a slab that something (this very measurement, e.g.
 * the sysfs writes) took as its per-CPU slab counts as fully active, so
 * noise is up to a slab's worth of objects per cache (measured in the
 * guest: 0 or 42 objects of kmalloc-96, 42 per slab). A leak of one
 * kmalloc object per cycle grows one cache by the number of cycles; a
 * cache fails when it grew by more than the larger of half the cycles and
 * two slabs' worth. So 1,000 cycles catch such a leak in every kmalloc
 * cache of 16 bytes and more, 200 cycles in those of 64 bytes and more.
 */
#define SLAB_TOL(cycles)	((cycles) / 2)
#define SLAB_NOISE_SLABS	2
#define SLAB_SETTLE_US		200000
#define SLABINFO	"/proc/slabinfo"
#define DROP_CACHES	"/proc/sys/vm/drop_caches"
#define MAX_SLABS	96

struct slabs {
	int n;
	char name[MAX_SLABS][40];
	long active[MAX_SLABS];
	long per_slab[MAX_SLABS];
};

static int is_kmalloc(const char *name)
{
	return !strncmp(name, "kmalloc-", 8) || !strncmp(name, "dma-kmalloc-", 12);
}

static int slab_read(struct slabs *s)
{
	char line[512], name[40];
	long active, per_slab;
	FILE *f;

	s->n = 0;
	f = fopen(SLABINFO, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && s->n < MAX_SLABS) {
		if (sscanf(line, "%39s %ld %*d %*d %ld", name, &active,
			   &per_slab) != 3 || !is_kmalloc(name))
			continue;
		strcpy(s->name[s->n], name);
		s->per_slab[s->n] = per_slab;
		s->active[s->n++] = active;
	}
	fclose(f);
	return s->n ? 0 : -1;
}

static int slab_snapshot(struct slabs *s)
{
	char path[128];
	int i;

	write_long(DROP_CACHES, 3);
	usleep(SLAB_SETTLE_US);
	if (slab_read(s))
		return -1;
	for (i = 0; i < s->n; i++) {
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink",
			 s->name[i]);
		write_long(path, 1);
	}
	return slab_read(s);
}

/*
 * Caches of B that grew by more than TOL objects (or two slabs' worth, if
 * more) since A, into BAD; returns
 * the largest growth, and its cache in *MAX_NAME.
 */
static long slab_diff(const struct slabs *a, const struct slabs *b, long tol,
		      char *bad, size_t len, const char **max_name)
{
	long d, t, max = 0;
	int i, j;

	*max_name = "none";
	for (i = 0; i < b->n; i++) {
		for (j = 0; j < a->n && strcmp(a->name[j], b->name[i]); j++)
			;
		d = b->active[i] - (j < a->n ? a->active[j] : 0);
		if (d > max) {
			max = d;
			*max_name = b->name[i];
		}
		t = tol;
		if (t < SLAB_NOISE_SLABS * b->per_slab[i])
			t = SLAB_NOISE_SLABS * b->per_slab[i];
		if (d > t)
			snprintf(bad + strlen(bad), len - strlen(bad),
				 " %s +%ld objects (tolerance %ld)",
				 b->name[i], d, t);
	}
	return max;
}

/*
 * The slab check itself must fail: LEAK_CYCLES eventfds (each a kmalloc'd
 * eventfd_ctx) kept open across two snapshots are found, and the same
 * eventfds closed again are not.
 */
static void check_slab_selftest(void)
{
	static int fds[LEAK_CYCLES];
	struct slabs a, b;
	char bad[512] = "", found[512] = "";
	const char *mn;
	long max;
	int i, n = 0;

	if (slab_snapshot(&a)) {
		fail("verbs-leak-slab-selftest", "cannot read %s", SLABINFO);
		return;
	}
	for (i = 0; i < LEAK_CYCLES; i++) {
		fds[i] = eventfd(0, 0);
		if (fds[i] < 0)
			break;
		n++;
	}
	slab_snapshot(&b);
	slab_diff(&a, &b, SLAB_TOL(LEAK_CYCLES), found, sizeof(found), &mn);
	for (i = 0; i < n; i++)
		close(fds[i]);
	slab_snapshot(&b);
	max = slab_diff(&a, &b, SLAB_TOL(LEAK_CYCLES), bad, sizeof(bad), &mn);
	if (n < LEAK_CYCLES)
		fail("verbs-leak-slab-selftest", "only %d eventfds: %s", n,
		     strerror(errno));
	else if (!found[0])
		fail("verbs-leak-slab-selftest",
		     "%d leaked eventfds not found in the kmalloc caches", n);
	else if (bad[0])
		fail("verbs-leak-slab-selftest", "after closing them:%s", bad);
	else
		ok("verbs-leak-slab-selftest");
	printf("info: slab selftest: leak found as%s; after close, largest growth %ld objects (%s)\n",
	       found, max, mn);
}
/*
 * LEAK_CYCLES PD alloc/free cycles. The device's PD count is not among the
 * hw_counters, so rdma resource show's pd count is compared: one more with
 * a PD held, the same afterwards.
 */
void check_leak_pd(const char *dev, struct ibv_context *ctx)
{
	const char *name = "verbs-leak-pd-x1000";
	struct counts before, during, after;
	struct ibv_pd *pd;
	int i, err;

	get_counts(dev, &before);
	if (before.rd_pd < 0) {
		fail(name, "rdma resource show: no pd count for %s", dev);
		return;
	}
	for (i = 0; i < LEAK_CYCLES; i++) {
		pd = ibv_alloc_pd(ctx);
		if (!pd) {
			fail(name, "cycle %d: ibv_alloc_pd: %s", i,
			     strerror(errno));
			return;
		}
		if (!i) {
			get_counts(dev, &during);
			if (during.rd_pd != before.rd_pd + 1) {
				fail(name, "pd count %ld -> %ld with one PD held",
				     before.rd_pd, during.rd_pd);
				ibv_dealloc_pd(pd);
				return;
			}
		}
		err = ibv_dealloc_pd(pd);
		if (err) {
			fail(name, "cycle %d: ibv_dealloc_pd: %s", i,
			     strerror(err));
			return;
		}
	}
	get_counts(dev, &after);
	if (after.rd_pd != before.rd_pd)
		fail(name, "pd count %ld -> %ld after %d cycles", before.rd_pd,
		     after.rd_pd, LEAK_CYCLES);
	else
		ok(name);
}
/*
 * LEAK_CYCLES create/destroy cycles of a CQ, an RC QP and a 4 KiB MR, then
 * LEAK_BIG_CYCLES registrations of a 256 MiB MR: the device's object counts,
 * rdma restrack's counts and this process's pinned memory end where they
 * started (and the counters do move while an object exists).
 */
void check_leaks(const char *dev, struct ibv_context *ctx,
			struct ibv_pd *pd)
{
	static char small[4096] __attribute__((aligned(4096)));
	struct counts before, during, after;
	struct slabs sb, sa;
	char bad[1024] = "", sbad[512] = "";
	const char *mn;
	long smax;
	int i, reported = 0;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	void *big;

	check_slab_selftest();
	get_counts(dev, &before);
	slab_snapshot(&sb);
	for (i = 0; i < LEAK_CYCLES; i++) {
		cq = ibv_create_cq(ctx, CQ_SIZE, NULL, NULL, 0);
		if (!cq) {
			snprintf(bad, sizeof(bad), "cycle %d: CQ: %s", i,
				 strerror(errno));
			break;
		}
		qp = make_qp(pd, cq, IBV_QPT_RC, NULL);
		if (!qp) {
			snprintf(bad, sizeof(bad), "cycle %d: QP: %s", i,
				 strerror(errno));
			ibv_destroy_cq(cq);
			break;
		}
		mr = ibv_reg_mr(pd, small, sizeof(small), IBV_ACCESS_LOCAL_WRITE);
		if (!mr) {
			snprintf(bad, sizeof(bad), "cycle %d: MR: %s", i,
				 strerror(errno));
			ibv_destroy_qp(qp);
			ibv_destroy_cq(cq);
			break;
		}
		if (!i) {
			get_counts(dev, &during);
			diff_counts(&before, &during, 1, 1, 1, 1, bad,
				    sizeof(bad));
			if (bad[0]) {
				fail("verbs-leak-cq-qp-mr-x1000",
				     "with one CQ, QP and MR:%s", bad);
				bad[0] = '\0';
				reported = 1;
			}
		}
		if (ibv_dereg_mr(mr) || ibv_destroy_qp(qp) || ibv_destroy_cq(cq)) {
			snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad),
				 " cycle %d: destroy: %s", i, strerror(errno));
			break;
		}
		if (bad[0])
			break;
	}
	if (!bad[0]) {
		get_counts(dev, &after);
		diff_counts(&before, &after, 0, 0, 0, 0, bad, sizeof(bad));
	}
	if (bad[0])
		fail("verbs-leak-cq-qp-mr-x1000", "%s", bad);
	else if (!reported)
		ok("verbs-leak-cq-qp-mr-x1000");
	/* Kernel slab: kmalloc caches back within half the cycles. */
	if (bad[0] || reported) {
		fail("verbs-leak-slab-cq-qp-mr-x1000", "the loop failed");
	} else if (slab_snapshot(&sa)) {
		fail("verbs-leak-slab-cq-qp-mr-x1000", "cannot read %s", SLABINFO);
	} else {
		smax = slab_diff(&sb, &sa, SLAB_TOL(LEAK_CYCLES), sbad,
				 sizeof(sbad), &mn);
		printf("info: kmalloc caches after %d CQ/QP/MR cycles: largest growth %ld objects (%s), tolerance max(%d, 2 slabs)\n",
		       LEAK_CYCLES, smax, mn, SLAB_TOL(LEAK_CYCLES));
		if (sbad[0])
			fail("verbs-leak-slab-cq-qp-mr-x1000", "%s", sbad);
		else
			ok("verbs-leak-slab-cq-qp-mr-x1000");
	}

	bad[0] = '\0';
	reported = 0;
	big = mmap(NULL, LEAK_BIG_MR, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (big == MAP_FAILED) {
		fail("verbs-leak-mr-256m-x200", "mmap: %s", strerror(errno));
		return;
	}
	memset(big, 1, LEAK_BIG_MR);
	get_counts(dev, &before);
	slab_snapshot(&sb);
	for (i = 0; i < LEAK_BIG_CYCLES; i++) {
		mr = ibv_reg_mr(pd, big, LEAK_BIG_MR, IBV_ACCESS_LOCAL_WRITE);
		if (!mr) {
			snprintf(bad, sizeof(bad), "cycle %d: ibv_reg_mr: %s", i,
				 strerror(errno));
			break;
		}
		/* The whole MR is pinned while it exists. */
		if (!i) {
			get_counts(dev, &during);
			diff_counts(&before, &during, 0, 0, 1, 1, bad,
				    sizeof(bad));
			if (during.pinned_kb - before.pinned_kb <
			    (long)(LEAK_BIG_MR >> 10))
				snprintf(bad + strlen(bad),
					 sizeof(bad) - strlen(bad),
					 " VmPin grew %ld kB (want %lu)",
					 during.pinned_kb - before.pinned_kb,
					 LEAK_BIG_MR >> 10);
			if (bad[0]) {
				fail("verbs-leak-mr-256m-x200",
				     "with one MR:%s", bad);
				bad[0] = '\0';
				reported = 1;
			}
		}
		if (ibv_dereg_mr(mr)) {
			snprintf(bad, sizeof(bad), "cycle %d: ibv_dereg_mr: %s",
				 i, strerror(errno));
			break;
		}
	}
	if (!bad[0]) {
		get_counts(dev, &after);
		diff_counts(&before, &after, 0, 0, 0, 0, bad, sizeof(bad));
	}
	munmap(big, LEAK_BIG_MR);
	if (bad[0])
		fail("verbs-leak-mr-256m-x200", "%s", bad);
	else if (!reported)
		ok("verbs-leak-mr-256m-x200");
	sbad[0] = '\0';
	if (bad[0] || reported) {
		fail("verbs-leak-slab-mr-256m-x200", "the loop failed");
	} else if (slab_snapshot(&sa)) {
		fail("verbs-leak-slab-mr-256m-x200", "cannot read %s", SLABINFO);
	} else {
		smax = slab_diff(&sb, &sa, SLAB_TOL(LEAK_BIG_CYCLES), sbad,
				 sizeof(sbad), &mn);
		printf("info: kmalloc caches after %d 256 MiB MR cycles: largest growth %ld objects (%s), tolerance max(%d, 2 slabs)\n",
		       LEAK_BIG_CYCLES, smax, mn, SLAB_TOL(LEAK_BIG_CYCLES));
		if (sbad[0])
			fail("verbs-leak-slab-mr-256m-x200", "%s", sbad);
		else
			ok("verbs-leak-slab-mr-256m-x200");
	}
}
