// SPDX-License-Identifier: GPL-2.0
/*
 * kite-verbs scale DEV GID: the object counts of a real NIC from one
 * process. SCALE_QPS RC QPs over SCALE_CQS CQs and SCALE_MRS MRs are
 * created (creation rates printed as info lines), a sample of
 * SCALE_SAMPLE QP pairs spread over them is connected in loopback and each
 * carries an RDMA WRITE between two sampled MRs (data checked), then all
 * is destroyed (rates printed). Last a 4 GiB MR is registered: 2 MiB of
 * shared memory (a hugetlb page where the kernel has one, else small
 * pages) mapped 2048 times, so 4 GiB of MR takes 2 MiB of guest memory;
 * a WRITE to its last bytes arrives in that memory.
 * SCALE_RESULTS result lines (kite-verbs.h).
 *
 * Copyright (c) 2026 The Kite authors
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "kite-verbs.h"

#define SCALE_QPS	10000
#define SCALE_CQS	1000
#define SCALE_MRS	10000
#define SCALE_SAMPLE	8
#define SCALE_BUF	(4 * 4096)	/* each MR: 4 pages, a level-1 list */
#define SCALE_MSG	256
#define BIG_MR_CHUNK	(2ul << 20)
#define BIG_MR_SIZE	(4ul << 30)
#define SCALE_TIMEOUT_S	20

static int scale_to_rts(struct ibv_qp *qp, uint32_t dest, const union ibv_gid *gid,
			int gid_index)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.sgid_index = gid_index;
	a.ah_attr.grh.hop_limit = 64;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* One signaled RDMA WRITE of @len bytes; its completion's status or -1. */
static int scale_write(struct ibv_qp *qp, struct ibv_cq *cq, void *src, uint32_t lkey,
		       uint64_t raddr, uint32_t rkey, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)src, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = {
		.wr_id = qp->qp_num, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;
	double end = now_s() + SCALE_TIMEOUT_S;
	struct ibv_wc wc;
	int n;

	if (ibv_post_send(qp, &wr, &bad))
		return -1;
	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0 && now_s() < end)
		;
	if (n != 1 || wc.wr_id != qp->qp_num)
		return -1;
	return wc.status;
}

static double rate(int n, double t0)
{
	double dt = now_s() - t0;

	return dt > 0 ? n / dt : 0;
}

/* The sampled QP pairs carry WRITEs between sampled MRs. */
static void scale_traffic(struct ibv_qp **qp, struct ibv_cq **cq, struct ibv_mr **mr,
			  char *buf, const union ibv_gid *gid, int gidx)
{
	char bad[256] = "";
	int i;

	for (i = 0; i < SCALE_SAMPLE && !bad[0]; i++) {
		int a = i * (SCALE_QPS / SCALE_SAMPLE), b = a + 1;
		int ms = i * (SCALE_MRS / SCALE_SAMPLE), md = SCALE_MRS - 1 - ms;
		char *src = buf, *dst = buf + SCALE_BUF / 2;
		int st, k;

		for (k = 0; k < SCALE_MSG; k++)
			src[k] = (char)(i * 31 + k);
		memset(dst, 0, SCALE_MSG);
		if (scale_to_rts(qp[a], qp[b]->qp_num, gid, gidx) ||
		    scale_to_rts(qp[b], qp[a]->qp_num, gid, gidx)) {
			snprintf(bad, sizeof(bad), "QPs %d/%d to RTS: %s", a, b,
				 strerror(errno));
			break;
		}
		st = scale_write(qp[a], cq[a % SCALE_CQS], src, mr[ms]->lkey,
				 (uintptr_t)dst, mr[md]->rkey, SCALE_MSG);
		if (st)
			snprintf(bad, sizeof(bad), "QP %u (#%d) WRITE with MRs #%d -> #%d: "
				 "status %d", qp[a]->qp_num, a, ms, md, st);
		else if (memcmp(src, dst, SCALE_MSG))
			snprintf(bad, sizeof(bad), "QP #%d: WRITE data differs", a);
	}
	if (bad[0])
		fail("verbs-scale-traffic", "%s", bad);
	else
		ok("verbs-scale-traffic");
}

/*
 * 4 GiB of virtual memory over one 2 MiB piece of shared memory: a
 * hugetlb memfd when the kernel has a huge page for it, else shmem.
 */
static char *big_map(const char **kind)
{
	char *base;
	size_t off;
	int fd;

	*kind = "a hugetlb page";
	fd = memfd_create("kite-big-mr", MFD_HUGETLB);
	if (fd < 0 || ftruncate(fd, BIG_MR_CHUNK) ||
	    fallocate(fd, 0, 0, BIG_MR_CHUNK)) {
		if (fd >= 0)
			close(fd);
		*kind = "shmem pages";
		fd = memfd_create("kite-big-mr", 0);
		if (fd < 0 || ftruncate(fd, BIG_MR_CHUNK))
			return NULL;
	}
	base = mmap(NULL, BIG_MR_SIZE + BIG_MR_CHUNK, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED) {
		close(fd);
		return NULL;
	}
	/* 2 MiB aligned, so that a huge page maps as one. */
	base = (char *)(((uintptr_t)base + BIG_MR_CHUNK - 1) & ~(BIG_MR_CHUNK - 1));
	for (off = 0; off < BIG_MR_SIZE; off += BIG_MR_CHUNK)
		if (mmap(base + off, BIG_MR_CHUNK, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
			close(fd);
			return NULL;
		}
	close(fd);
	return base;
}

/* MemFree and the huge pages in use, for the info lines. */
static const char *read_meminfo(void)
{
	static char out[128];
	char line[128];
	long free_kb = -1, huge_total = -1, huge_free = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f)) {
		sscanf(line, "MemFree: %ld", &free_kb);
		sscanf(line, "HugePages_Total: %ld", &huge_total);
		sscanf(line, "HugePages_Free: %ld", &huge_free);
	}
	if (f)
		fclose(f);
	snprintf(out, sizeof(out), "MemFree %ld MiB, huge pages %ld in use",
		 free_kb / 1024, huge_total - huge_free);
	return out;
}

static void scale_big_mr(struct ibv_pd *pd, struct ibv_qp *qp, struct ibv_cq *cq,
			 char *src, uint32_t lkey)
{
	static const char nr_huge[] = "/proc/sys/vm/nr_hugepages";
	long huge0 = read_long(nr_huge);
	const char *kind;
	struct ibv_mr *mr;
	char *base;
	double t0;
	int st;

	/* One 2 MiB huge page, where the kernel has them. */
	if (huge0 == 0)
		write_long(nr_huge, 1);
	info("before the 4 GiB MR: %s", read_meminfo());
	base = big_map(&kind);
	if (!base) {
		fail("verbs-scale-mr-4g", "cannot map 4 GiB: %s", strerror(errno));
		fail("verbs-scale-mr-4g-write", "no MR");
		return;
	}
	t0 = now_s();
	mr = ibv_reg_mr(pd, base, BIG_MR_SIZE, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	if (!mr) {
		fail("verbs-scale-mr-4g", "ibv_reg_mr(4 GiB over %s): %s", kind,
		     strerror(errno));
		fail("verbs-scale-mr-4g-write", "no MR");
		return;
	}
	info("4 GiB MR over 2 MiB of %s registered in %.2f s", kind, now_s() - t0);
	info("after the 4 GiB MR: %s", read_meminfo());
	ok("verbs-scale-mr-4g");
	/* The MR's last bytes are the last bytes of the shared 2 MiB. */
	memset(src, 0x5a, SCALE_MSG);
	memset(base + BIG_MR_CHUNK - SCALE_MSG, 0, SCALE_MSG);
	st = scale_write(qp, cq, src, lkey, (uintptr_t)base + BIG_MR_SIZE - SCALE_MSG,
			 mr->rkey, SCALE_MSG);
	if (st)
		fail("verbs-scale-mr-4g-write", "WRITE to the last bytes: status %d", st);
	else if (memcmp(base + BIG_MR_CHUNK - SCALE_MSG, src, SCALE_MSG))
		fail("verbs-scale-mr-4g-write", "data not at the end of the memory");
	else
		ok("verbs-scale-mr-4g-write");
	t0 = now_s();
	if (ibv_dereg_mr(mr))
		fail("verbs-scale-mr-4g-dereg", "%s", strerror(errno));
	else
		ok("verbs-scale-mr-4g-dereg");
	info("4 GiB MR deregistered in %.2f s", now_s() - t0);
	munmap(base, BIG_MR_SIZE);
	if (huge0 == 0)
		write_long(nr_huge, 0);
}

int scale(struct ibv_context *ctx, const char *gid_text)
{
	static struct ibv_qp *qp[SCALE_QPS];
	static struct ibv_cq *cq[SCALE_CQS];
	static struct ibv_mr *mr[SCALE_MRS];
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	union ibv_gid gid;
	int i, n, done, gidx, failures0 = failures;
	double t0, start = now_s();
	struct ibv_pd *pd;
	char *buf;

	pd = ibv_alloc_pd(ctx);
	buf = aligned_alloc(4096, SCALE_BUF);
	if (!pd || !buf || inet_pton(AF_INET6, gid_text, gid.raw) != 1 ||
	    (gidx = find_gid(ctx, &gid)) < 0) {
		fail("verbs-scale-setup", "PD, buffer or GID %s: %s", gid_text,
		     strerror(errno));
		return 1;
	}
	memset(buf, 0, SCALE_BUF);

	t0 = now_s();
	for (n = 0; n < SCALE_CQS; n++)
		if (!(cq[n] = ibv_create_cq(ctx, 4 * SCALE_QPS / SCALE_CQS, NULL, NULL, 0)))
			break;
	info("%d CQs created at %.0f/s", n, rate(n, t0));
	if (n < SCALE_CQS)
		fail("verbs-scale-cqs", "CQ #%d: %s", n, strerror(errno));
	else
		ok("verbs-scale-cqs");

	t0 = now_s();
	for (i = 0; n == SCALE_CQS && i < SCALE_QPS; i++) {
		qa.send_cq = qa.recv_cq = cq[i % SCALE_CQS];
		if (!(qp[i] = ibv_create_qp(pd, &qa)))
			break;
	}
	info("%d QPs created at %.0f/s", i, rate(i, t0));
	if (i < SCALE_QPS)
		fail("verbs-scale-qps", "QP #%d: %s", i, strerror(errno));
	else
		ok("verbs-scale-qps");

	t0 = now_s();
	for (n = 0; n < SCALE_MRS; n++)
		if (!(mr[n] = ibv_reg_mr(pd, buf, SCALE_BUF, IBV_ACCESS_LOCAL_WRITE |
					 IBV_ACCESS_REMOTE_WRITE)))
			break;
	info("%d MRs of %d KiB registered at %.0f/s", n, SCALE_BUF / 1024, rate(n, t0));
	if (n < SCALE_MRS)
		fail("verbs-scale-mrs", "MR #%d: %s", n, strerror(errno));
	else
		ok("verbs-scale-mrs");

	if (i == SCALE_QPS && n == SCALE_MRS) {
		scale_traffic(qp, cq, mr, buf, &gid, gidx);
		scale_big_mr(pd, qp[0], cq[0], buf, mr[0]->lkey);
	} else {
		fail("verbs-scale-traffic", "objects missing");
		fail("verbs-scale-mr-4g", "objects missing");
		fail("verbs-scale-mr-4g-write", "objects missing");
		fail("verbs-scale-mr-4g-dereg", "objects missing");
	}

	t0 = now_s();
	for (i = 0, n = 0; i < SCALE_QPS; i++)
		if (qp[i])
			n += !ibv_destroy_qp(qp[i]);
	info("%d QPs destroyed at %.0f/s", n, rate(n, t0));
	done = n;
	t0 = now_s();
	for (i = 0, n = 0; i < SCALE_MRS; i++)
		if (mr[i])
			n += !ibv_dereg_mr(mr[i]);
	info("%d MRs deregistered at %.0f/s", n, rate(n, t0));
	done += n;
	for (i = 0; i < SCALE_CQS; i++)
		if (cq[i])
			done += !ibv_destroy_cq(cq[i]);
	if (done != SCALE_QPS + SCALE_MRS + SCALE_CQS || ibv_dealloc_pd(pd))
		fail("verbs-scale-destroy", "%d of %d objects destroyed", done,
		     SCALE_QPS + SCALE_MRS + SCALE_CQS);
	else
		ok("verbs-scale-destroy");
	free(buf);
	info("scale checks took %.1f s", now_s() - start);
	return failures != failures0;
}
