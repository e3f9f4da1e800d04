// SPDX-License-Identifier: GPL-2.0
/*
 * Kite verbs checks through libibverbs and the kite provider, run in a guest
 * (built on the host against out/rdma-core by scripts/mkinitramfs.sh and
 * installed as /usr/bin/kite-verbs).
 *
 *   kite-verbs limits          print the limits the device model implements
 *                              (qemu/kite_limits.h) as shell assignments
 *                              (KITE_DEF_MAX_QP=1024 ...), so that guest
 *                              scripts compare against the model's header
 *   kite-verbs basic DEV GID   open DEV, check its doorbell mapping, query
 *                              device and port, find GID (text form) on port
 *                              1, 100 PDs; CQs, QPs (RC/UC/UD, state
 *                              walks, illegal transitions), MRs (4 KiB,
 *                              2 MiB, 256 MiB, 1 GiB), error paths and
 *                              their errno, leak loops (with kmalloc slab
 *                              counts); context open/close cycles
 *
 * Each check prints one line in the tests/vm format: "ok NAME" or
 * "FAIL NAME: detail". Exit status 1 when a check failed, 2 on bad usage.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <kite/kite_hw.h>
#include <kite_limits.h>

#define NUM_PDS		100
/* More than KITE_MAX_UCTX: a leaked device context would make open fail. */
#define CTX_CYCLES	(KITE_MAX_UCTX + 45)
#define UVERBS_DEV	"/dev/infiniband/uverbs"

static int failures;

static void ok(const char *name)
{
	printf("ok %s\n", name);
	fflush(stdout);
}

static void fail(const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("FAIL %s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	failures++;
}

/*
 * Mappings of a uverbs device in this process: how many, and how many of
 * them are one doorbell page, writable and shared.
 */
static void uverbs_maps(int *all, int *db_pages)
{
	unsigned long start, end;
	char line[512], perms[8];
	FILE *f;

	*all = 0;
	*db_pages = 0;
	f = fopen("/proc/self/maps", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, UVERBS_DEV))
			continue;
		(*all)++;
		if (sscanf(line, "%lx-%lx %7s", &start, &end, perms) == 3 &&
		    end - start == KITE_DB_PAGE_SIZE && perms[1] == 'w' &&
		    perms[3] == 's')
			(*db_pages)++;
	}
	fclose(f);
}

/* First line of a sysfs file of DEV, without the newline ("" on error). */
static void sysfs_read(const char *dev, const char *attr, char *buf, size_t len)
{
	char path[256];
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/%s", dev, attr);
	f = fopen(path, "r");
	if (!f)
		return;
	if (!fgets(buf, len, f))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* Append "name=got (want W)" to a mismatch list when got != want. */
#define EXPECT(buf, name, got, want)					\
	do {								\
		unsigned long long g_ = (got), w_ = (want);		\
		if (g_ != w_) {						\
			size_t l_ = strlen(buf);			\
			snprintf((buf) + l_, sizeof(buf) - l_,		\
				 " %s=%llu (want %llu)", (name), g_, w_); \
		}							\
	} while (0)

static void check_device(struct ibv_context *ctx, const char *dev)
{
	struct ibv_device_attr_ex ax = {};
	struct ibv_device_attr *a = &ax.orig_attr;
	char bad[1024] = "", fw[64], guid[64], want_guid[64];
	unsigned long long g;
	int err;

	err = ibv_query_device_ex(ctx, NULL, &ax);
	if (err) {
		fail("verbs-query-device", "ibv_query_device_ex: %s", strerror(err));
		return;
	}
	EXPECT(bad, "max_qp", a->max_qp, KITE_DEF_MAX_QP);
	EXPECT(bad, "max_cq", a->max_cq, KITE_DEF_MAX_CQ);
	EXPECT(bad, "max_mr", a->max_mr, KITE_DEF_MAX_MR);
	EXPECT(bad, "max_pd", a->max_pd, KITE_DEF_MAX_PD);
	EXPECT(bad, "max_cqe", a->max_cqe, KITE_DEF_MAX_CQE);
	EXPECT(bad, "max_qp_wr", a->max_qp_wr, KITE_DEF_MAX_QP_WR);
	EXPECT(bad, "max_sge", a->max_sge, KITE_DEF_MAX_SGE);
	EXPECT(bad, "max_qp_rd_atom", a->max_qp_rd_atom, KITE_DEF_MAX_RD_ATOM);
	EXPECT(bad, "max_mr_size", a->max_mr_size, KITE_DEF_MAX_MR_SIZE);
	EXPECT(bad, "vendor_id", a->vendor_id, KITE_PCI_VENDOR_ID);
	EXPECT(bad, "vendor_part_id", a->vendor_part_id, KITE_PCI_DEVICE_ID);
	EXPECT(bad, "phys_port_cnt", a->phys_port_cnt, 1);
	sysfs_read(dev, "fw_ver", fw, sizeof(fw));
	if (strcmp(fw, a->fw_ver))
		snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad),
			 " fw_ver=%s (sysfs %s)", a->fw_ver, fw);
	/* sysfs prints the node GUID as 4 groups of 4 hex digits. */
	g = be64toh(a->node_guid);
	snprintf(guid, sizeof(guid), "%04llx:%04llx:%04llx:%04llx",
		 g >> 48, (g >> 32) & 0xffff, (g >> 16) & 0xffff, g & 0xffff);
	sysfs_read(dev, "node_guid", want_guid, sizeof(want_guid));
	if (strcmp(guid, want_guid))
		snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad),
			 " node_guid=%s (sysfs %s)", guid, want_guid);
	if (bad[0])
		fail("verbs-query-device", "%s", bad);
	else
		ok("verbs-query-device");
}

static void check_port(struct ibv_context *ctx, const char *gid_text)
{
	struct ibv_port_attr pa = {};
	union ibv_gid gid, want;
	char bad[512] = "";
	int err, i;

	err = ibv_query_port(ctx, 1, &pa);
	if (err) {
		fail("verbs-query-port", "ibv_query_port(1): %s", strerror(err));
		return;
	}
	EXPECT(bad, "state", pa.state, IBV_PORT_ACTIVE);
	EXPECT(bad, "link_layer", pa.link_layer, IBV_LINK_LAYER_ETHERNET);
	EXPECT(bad, "gid_tbl_len", pa.gid_tbl_len, KITE_DEF_MAX_GID);
	EXPECT(bad, "max_msg_sz", pa.max_msg_sz, KITE_MAX_MSG_SIZE);
	if (bad[0])
		fail("verbs-query-port", "%s", bad);
	else
		ok("verbs-query-port");

	/* The device has one port: port 2 is an error, not garbage. */
	err = ibv_query_port(ctx, 2, &pa);
	if (err)
		ok("verbs-query-port-2-fails");
	else
		fail("verbs-query-port-2-fails", "ibv_query_port(2) succeeded");

	if (inet_pton(AF_INET6, gid_text, want.raw) != 1) {
		fail("verbs-query-gid", "bad GID argument '%s'", gid_text);
		return;
	}
	for (i = 0; i < KITE_DEF_MAX_GID; i++) {
		if (ibv_query_gid(ctx, 1, i, &gid))
			continue;
		if (!memcmp(gid.raw, want.raw, sizeof(gid.raw))) {
			ok("verbs-query-gid");
			return;
		}
	}
	fail("verbs-query-gid", "%s not in port 1's GID table", gid_text);
}

static void check_pds(struct ibv_context *ctx)
{
	struct ibv_pd *pd[NUM_PDS];
	int i, j, n = 0, err;

	for (i = 0; i < NUM_PDS; i++) {
		pd[i] = ibv_alloc_pd(ctx);
		if (!pd[i]) {
			fail("verbs-pd-x100", "ibv_alloc_pd #%d: %s", i,
			     strerror(errno));
			break;
		}
		n++;
		for (j = 0; j < i; j++) {
			if (pd[j]->handle == pd[i]->handle) {
				fail("verbs-pd-x100", "PDs #%d and #%d share handle %u",
				     j, i, pd[i]->handle);
				i = NUM_PDS;
				break;
			}
		}
	}
	for (i = 0; i < n; i++) {
		err = ibv_dealloc_pd(pd[i]);
		if (err) {
			fail("verbs-pd-x100", "ibv_dealloc_pd #%d: %s", i,
			     strerror(err));
			return;
		}
	}
	if (n == NUM_PDS)
		ok("verbs-pd-x100");
}

/* ---- objects: CQ, MR, QP ---------------------------------------------- */

#define CQ_SIZE		16
#define LEAK_CYCLES	1000
#define LEAK_BIG_CYCLES	200
#define LEAK_BIG_MR	(256ul << 20)
#define MR_2M		(2ul << 20)
#define MR_LARGE	(256ul << 20)
#define MR_1G		(1ul << 30)
#define HUGEPAGES	"/proc/sys/vm/nr_hugepages"
#define RDMA_TOOL	"/usr/bin/rdma"
/* hw_counters are cached for RDMA_HW_STATS_DEFAULT_LIFESPAN (10 ms). */
#define STATS_SETTLE_US	50000
#define MTU_1024	IBV_MTU_1024
#define TEST_QKEY	0x11111111
#define TEST_SQ_PSN	0x123456
#define TEST_RQ_PSN	0x654321
#define TEST_TIMEOUT	14
#define TEST_RETRY	7
#define TEST_MIN_RNR	12

/* Report a verb that should fail with WANT: ok, or FAIL with what happened. */
static void expect_errno(const char *name, int succeeded, int err, int want)
{
	if (succeeded)
		fail(name, "succeeded, want %s", strerror(want));
	else if (err != want)
		fail(name, "errno %d (%s), want %d (%s)", err, strerror(err),
		     want, strerror(want));
	else
		ok(name);
}

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			      enum ibv_qp_type type, struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = type,
		.cap = { .max_send_wr = 10, .max_recv_wr = 10,
			 .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 64 },
	};
	struct ibv_qp *qp;

	qp = ibv_create_qp(pd, &qa);
	if (qp && cap)
		*cap = qa.cap;
	return qp;
}

static void check_cq(struct ibv_context *ctx)
{
	struct ibv_cq *cq, *small;
	int err;

	cq = ibv_create_cq(ctx, CQ_SIZE - 3, NULL, NULL, 0);
	if (!cq) {
		fail("verbs-cq-create-destroy", "ibv_create_cq(%d): %s",
		     CQ_SIZE - 3, strerror(errno));
		return;
	}
	/* Depth: roundup_pow_of_two(max(cqe, 4)). */
	small = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	if (!small) {
		fail("verbs-cq-create-destroy", "ibv_create_cq(1): %s",
		     strerror(errno));
		ibv_destroy_cq(cq);
		return;
	}
	if (cq->cqe != CQ_SIZE || small->cqe != 4)
		fail("verbs-cq-create-destroy", "cqe %d for 13 (want %d), %d for 1 (want 4)",
		     cq->cqe, CQ_SIZE, small->cqe);
	else if ((err = ibv_destroy_cq(small)) || (err = ibv_destroy_cq(cq)))
		fail("verbs-cq-create-destroy", "ibv_destroy_cq: %s", strerror(err));
	else
		ok("verbs-cq-create-destroy");
}

/*
 * Resize a CQ of 13 (16) entries to 100 (reported: the rounded depth 128),
 * back down, and beyond max_cqe (EINVAL, CQ unchanged); then arm it for
 * solicited and for any completion through the provider's doorbell.
 */
static void check_cq_resize_notify(struct ibv_context *ctx)
{
	struct ibv_device_attr attr;
	struct ibv_cq *cq;
	int err;

	err = ibv_query_device(ctx, &attr);
	cq = err ? NULL : ibv_create_cq(ctx, CQ_SIZE - 3, NULL, NULL, 0);
	if (!cq) {
		fail("verbs-cq-resize", "query/create: %s",
		     strerror(err ? err : errno));
		fail("verbs-cq-req-notify", "no CQ");
		return;
	}
	err = ibv_resize_cq(cq, 100);
	if (err)
		fail("verbs-cq-resize", "ibv_resize_cq(100): %s", strerror(err));
	else if (cq->cqe != 128)
		fail("verbs-cq-resize", "cqe %d after resize to 100 (want 128)",
		     cq->cqe);
	else if ((err = ibv_resize_cq(cq, CQ_SIZE - 3)) || cq->cqe != CQ_SIZE)
		fail("verbs-cq-resize", "resize back to %d: %s, cqe %d",
		     CQ_SIZE - 3, strerror(err), cq->cqe);
	else if ((err = ibv_resize_cq(cq, attr.max_cqe + 1)) != EINVAL ||
		 cq->cqe != CQ_SIZE)
		fail("verbs-cq-resize", "resize to max_cqe + 1: %s (want EINVAL), cqe %d",
		     strerror(err), cq->cqe);
	else
		ok("verbs-cq-resize");

	err = ibv_req_notify_cq(cq, 1);
	if (err)
		fail("verbs-cq-req-notify", "solicited: %s", strerror(err));
	else if ((err = ibv_req_notify_cq(cq, 0)))
		fail("verbs-cq-req-notify", "next: %s", strerror(err));
	else
		ok("verbs-cq-req-notify");
	err = ibv_destroy_cq(cq);
	if (err)
		fail("verbs-cq-resize", "ibv_destroy_cq: %s", strerror(err));
}

/* QP of TYPE: created in RESET, caps reported as the rings hold them. */
static void check_qp_create(struct ibv_pd *pd, struct ibv_cq *cq,
			    enum ibv_qp_type type, const char *name)
{
	struct ibv_qp_init_attr init = {};
	struct ibv_qp_attr attr = {};
	struct ibv_qp_cap cap;
	char bad[512] = "";
	struct ibv_qp *qp;
	int err;

	qp = make_qp(pd, cq, type, &cap);
	if (!qp) {
		fail(name, "ibv_create_qp: %s", strerror(errno));
		return;
	}
	/*
	 * Asked: 10 WRs, 2 SGEs, 64 bytes inline. Rings: depth 16; SQ stride
	 * 128 (16 + 40 + 64 rounded up) leaves 72 bytes: 4 SGEs, 72 inline;
	 * RQ stride 64 (16 + 2 * 16 rounded up) leaves 48 bytes: 3 SGEs.
	 */
	EXPECT(bad, "max_send_wr", cap.max_send_wr, 16);
	EXPECT(bad, "max_recv_wr", cap.max_recv_wr, 16);
	EXPECT(bad, "max_send_sge", cap.max_send_sge, 4);
	EXPECT(bad, "max_recv_sge", cap.max_recv_sge, 3);
	EXPECT(bad, "max_inline_data", cap.max_inline_data, 72);
	if (!qp->qp_num)
		snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), " qp_num 0");
	err = ibv_query_qp(qp, &attr, IBV_QP_STATE | IBV_QP_CAP, &init);
	if (err)
		snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad),
			 " ibv_query_qp: %s", strerror(err));
	else
		EXPECT(bad, "state", attr.qp_state, IBV_QPS_RESET);
	err = ibv_destroy_qp(qp);
	if (err)
		snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad),
			 " ibv_destroy_qp: %s", strerror(err));
	if (bad[0])
		fail(name, "%s", bad);
	else
		ok(name);
}

/* Index of GID (binary) in port 1's table, -1 when absent. */
static int find_gid(struct ibv_context *ctx, const union ibv_gid *want)
{
	union ibv_gid gid;
	int i;

	for (i = 0; i < KITE_DEF_MAX_GID; i++)
		if (!ibv_query_gid(ctx, 1, i, &gid) &&
		    !memcmp(gid.raw, want->raw, sizeof(gid.raw)))
			return i;
	return -1;
}

static int to_state(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
		    enum ibv_qp_state state)
{
	a->qp_state = state;
	return ibv_modify_qp(qp, a, mask | IBV_QP_STATE);
}

static void init_attr(struct ibv_qp_attr *a, enum ibv_qp_type type)
{
	memset(a, 0, sizeof(*a));
	a->pkey_index = 0;
	a->port_num = 1;
	if (type == IBV_QPT_UD)
		a->qkey = TEST_QKEY;
	else
		a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				     (type == IBV_QPT_RC ? IBV_ACCESS_REMOTE_READ : 0);
}

#define INIT_MASK(t)	(IBV_QP_PKEY_INDEX | IBV_QP_PORT | \
			 ((t) == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS))
#define RTR_MASK_UC	(IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | \
			 IBV_QP_RQ_PSN)
#define RTR_MASK_RC	(RTR_MASK_UC | IBV_QP_MAX_DEST_RD_ATOMIC | \
			 IBV_QP_MIN_RNR_TIMER)
#define RTS_MASK_RC	(IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | \
			 IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC)

/* RTR attributes: a path to ourselves (own GID, own QPN). */
static void rtr_attr(struct ibv_qp_attr *a, struct ibv_qp *qp,
		     const union ibv_gid *gid, int gid_index)
{
	memset(a, 0, sizeof(*a));
	a->path_mtu = MTU_1024;
	a->dest_qp_num = qp->qp_num;
	a->rq_psn = TEST_RQ_PSN;
	a->max_dest_rd_atomic = 1;
	a->min_rnr_timer = TEST_MIN_RNR;
	a->ah_attr.is_global = 1;
	a->ah_attr.port_num = 1;
	a->ah_attr.grh.dgid = *gid;
	a->ah_attr.grh.sgid_index = gid_index;
	a->ah_attr.grh.hop_limit = 64;
}

static void rts_attr(struct ibv_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->timeout = TEST_TIMEOUT;
	a->retry_cnt = TEST_RETRY;
	a->rnr_retry = TEST_RETRY;
	a->sq_psn = TEST_SQ_PSN;
	a->max_rd_atomic = 1;
}

/* The state and what each transition set, as ibv_query_qp reports them. */
static void query_bad(struct ibv_qp *qp, enum ibv_qp_type type,
		      enum ibv_qp_state want, const union ibv_gid *gid,
		      int gid_index, char *bad, size_t len)
{
	struct ibv_qp_init_attr init = {};
	struct ibv_qp_attr a = {};
	char b[512] = "";
	int err;

	err = ibv_query_qp(qp, &a, IBV_QP_STATE | INIT_MASK(type) |
			   (type == IBV_QPT_UD ? IBV_QP_SQ_PSN :
			    (type == IBV_QPT_RC ? RTR_MASK_RC | RTS_MASK_RC :
			     RTR_MASK_UC | IBV_QP_SQ_PSN)), &init);
	if (err) {
		snprintf(bad + strlen(bad), len - strlen(bad),
			 " query in state %d: %s", want, strerror(err));
		return;
	}
	EXPECT(b, "state", a.qp_state, want);
	if (want == IBV_QPS_RESET || want == IBV_QPS_ERR)
		goto out;
	EXPECT(b, "port_num", a.port_num, 1);
	EXPECT(b, "pkey_index", a.pkey_index, 0);
	if (type == IBV_QPT_UD) {
		EXPECT(b, "qkey", a.qkey, TEST_QKEY);
		if (want == IBV_QPS_RTS || want == IBV_QPS_SQD)
			EXPECT(b, "sq_psn", a.sq_psn, TEST_SQ_PSN);
		goto out;
	}
	EXPECT(b, "qp_access_flags", a.qp_access_flags,
	       IBV_ACCESS_REMOTE_WRITE |
	       (type == IBV_QPT_RC ? IBV_ACCESS_REMOTE_READ : 0));
	if (want == IBV_QPS_INIT)
		goto out;
	EXPECT(b, "path_mtu", a.path_mtu, MTU_1024);
	EXPECT(b, "dest_qp_num", a.dest_qp_num, qp->qp_num);
	EXPECT(b, "rq_psn", a.rq_psn, TEST_RQ_PSN);
	EXPECT(b, "is_global", a.ah_attr.is_global, 1);
	EXPECT(b, "sgid_index", a.ah_attr.grh.sgid_index, gid_index);
	if (memcmp(a.ah_attr.grh.dgid.raw, gid->raw, sizeof(gid->raw)))
		snprintf(b + strlen(b), sizeof(b) - strlen(b), " dgid differs");
	if (type == IBV_QPT_RC) {
		EXPECT(b, "max_dest_rd_atomic", a.max_dest_rd_atomic, 1);
		EXPECT(b, "min_rnr_timer", a.min_rnr_timer, TEST_MIN_RNR);
	}
	if (want != IBV_QPS_RTS && want != IBV_QPS_SQD)
		goto out;
	EXPECT(b, "sq_psn", a.sq_psn, TEST_SQ_PSN);
	if (type == IBV_QPT_RC) {
		EXPECT(b, "timeout", a.timeout, TEST_TIMEOUT);
		EXPECT(b, "retry_cnt", a.retry_cnt, TEST_RETRY);
		EXPECT(b, "rnr_retry", a.rnr_retry, TEST_RETRY);
		EXPECT(b, "max_rd_atomic", a.max_rd_atomic, 1);
	}
out:
	if (b[0])
		snprintf(bad + strlen(bad), len - strlen(bad), " [state %d]%s",
			 want, b);
}

/*
 * A QP of TYPE (RC or UD) in RTS: RTS -> SQD, SQD -> SQD changing one
 * attribute (RC: timeout, UD: qkey) and back, SQD -> RTS, each step
 * checked with ibv_query_qp. Leaves the QP in RTS when it passes.
 */
static void check_qp_sqd(struct ibv_qp *qp, enum ibv_qp_type type,
			 const union ibv_gid *gid, int gid_index)
{
	const char *name = type == IBV_QPT_RC ? "verbs-qp-rc-sqd" :
						"verbs-qp-ud-sqd";
	int mask = type == IBV_QPT_RC ? IBV_QP_TIMEOUT : IBV_QP_QKEY;
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;
	char bad[1024] = "";
	int err;

	memset(&a, 0, sizeof(a));
	err = to_state(qp, &a, 0, IBV_QPS_SQD);
	if (err) {
		fail(name, "RTS->SQD: %s", strerror(err));
		return;
	}
	query_bad(qp, type, IBV_QPS_SQD, gid, gid_index, bad, sizeof(bad));

	memset(&a, 0, sizeof(a));
	a.timeout = TEST_TIMEOUT + 1;
	a.qkey = TEST_QKEY + 1;
	err = to_state(qp, &a, mask, IBV_QPS_SQD);
	if (err) {
		fail(name, "SQD->SQD: %s", strerror(err));
		return;
	}
	memset(&a, 0, sizeof(a));
	err = ibv_query_qp(qp, &a, IBV_QP_STATE | mask, &init);
	if (err)
		snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad),
			 " query after SQD->SQD: %s", strerror(err));
	else if (type == IBV_QPT_RC)
		EXPECT(bad, "SQD->SQD timeout", a.timeout, TEST_TIMEOUT + 1);
	else
		EXPECT(bad, "SQD->SQD qkey", a.qkey, TEST_QKEY + 1);

	memset(&a, 0, sizeof(a));
	a.timeout = TEST_TIMEOUT;
	a.qkey = TEST_QKEY;
	err = to_state(qp, &a, mask, IBV_QPS_SQD);
	if (err) {
		fail(name, "SQD->SQD back: %s", strerror(err));
		return;
	}
	query_bad(qp, type, IBV_QPS_SQD, gid, gid_index, bad, sizeof(bad));

	memset(&a, 0, sizeof(a));
	err = to_state(qp, &a, 0, IBV_QPS_RTS);
	if (err) {
		fail(name, "SQD->RTS: %s", strerror(err));
		return;
	}
	query_bad(qp, type, IBV_QPS_RTS, gid, gid_index, bad, sizeof(bad));
	if (bad[0])
		fail(name, "%s", bad);
	else
		ok(name);
}

/*
 * Walk a QP of TYPE through RESET -> INIT -> RTR -> RTS (RC and UD: then
 * through SQD and back, a check of its own; RC: then ERR -> RESET),
 * querying after each step.
 */
static void check_qp_walk(struct ibv_pd *pd, struct ibv_cq *cq,
			  enum ibv_qp_type type, const union ibv_gid *gid,
			  int gid_index, const char *name)
{
	struct ibv_qp_attr a;
	char bad[1024] = "";
	struct ibv_qp *qp;
	int err;

	qp = make_qp(pd, cq, type, NULL);
	if (!qp) {
		fail(name, "ibv_create_qp: %s", strerror(errno));
		return;
	}
	init_attr(&a, type);
	err = to_state(qp, &a, INIT_MASK(type), IBV_QPS_INIT);
	if (err) {
		fail(name, "RESET->INIT: %s", strerror(err));
		goto out;
	}
	query_bad(qp, type, IBV_QPS_INIT, gid, gid_index, bad, sizeof(bad));
	if (type == IBV_QPT_UD)
		memset(&a, 0, sizeof(a));
	else
		rtr_attr(&a, qp, gid, gid_index);
	err = to_state(qp, &a, type == IBV_QPT_UD ? 0 :
		       type == IBV_QPT_RC ? RTR_MASK_RC : RTR_MASK_UC,
		       IBV_QPS_RTR);
	if (err) {
		fail(name, "INIT->RTR: %s", strerror(err));
		goto out;
	}
	query_bad(qp, type, IBV_QPS_RTR, gid, gid_index, bad, sizeof(bad));
	rts_attr(&a);
	err = to_state(qp, &a, type == IBV_QPT_RC ? RTS_MASK_RC : IBV_QP_SQ_PSN,
		       IBV_QPS_RTS);
	if (err) {
		fail(name, "RTR->RTS: %s", strerror(err));
		goto out;
	}
	query_bad(qp, type, IBV_QPS_RTS, gid, gid_index, bad, sizeof(bad));
	if (type != IBV_QPT_UC)
		check_qp_sqd(qp, type, gid, gid_index);
	if (type == IBV_QPT_RC) {
		memset(&a, 0, sizeof(a));
		err = to_state(qp, &a, 0, IBV_QPS_ERR);
		if (err) {
			fail(name, "RTS->ERR: %s", strerror(err));
			goto out;
		}
		query_bad(qp, type, IBV_QPS_ERR, gid, gid_index, bad, sizeof(bad));
		err = to_state(qp, &a, 0, IBV_QPS_RESET);
		if (err) {
			fail(name, "ERR->RESET: %s", strerror(err));
			goto out;
		}
		query_bad(qp, type, IBV_QPS_RESET, gid, gid_index, bad,
			  sizeof(bad));
	}
	if (bad[0])
		fail(name, "%s", bad);
	else
		ok(name);
out:
	err = ibv_destroy_qp(qp);
	if (err)
		fail(name, "ibv_destroy_qp: %s", strerror(err));
}

/* RESET -> RTR and INIT -> RTS are refused with EINVAL. */
static void check_qp_illegal(struct ibv_pd *pd, struct ibv_cq *cq,
			     const union ibv_gid *gid, int gid_index)
{
	struct ibv_qp_attr a;
	struct ibv_qp *qp;
	int err;

	qp = make_qp(pd, cq, IBV_QPT_RC, NULL);
	if (!qp) {
		fail("verbs-qp-reset-to-rtr-einval", "ibv_create_qp: %s",
		     strerror(errno));
		fail("verbs-qp-init-to-rts-einval", "no QP");
		return;
	}
	rtr_attr(&a, qp, gid, gid_index);
	err = to_state(qp, &a, RTR_MASK_RC, IBV_QPS_RTR);
	expect_errno("verbs-qp-reset-to-rtr-einval", !err, err, EINVAL);
	init_attr(&a, IBV_QPT_RC);
	err = to_state(qp, &a, INIT_MASK(IBV_QPT_RC), IBV_QPS_INIT);
	if (err) {
		fail("verbs-qp-init-to-rts-einval", "RESET->INIT: %s",
		     strerror(err));
	} else {
		rts_attr(&a);
		err = to_state(qp, &a, RTS_MASK_RC, IBV_QPS_RTS);
		expect_errno("verbs-qp-init-to-rts-einval", !err, err, EINVAL);
	}
	ibv_destroy_qp(qp);
}

/* Register LEN bytes at BUF, check the keys, deregister. */
static void check_mr(struct ibv_pd *pd, void *buf, size_t len,
		     const char *name)
{
	struct ibv_mr *mr, *again;
	uint32_t lkey;
	int err;

	mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!mr) {
		fail(name, "ibv_reg_mr(%zu bytes): %s", len, strerror(errno));
		return;
	}
	if (mr->addr != buf || mr->length != len) {
		fail(name, "MR covers %p+%zu, want %p+%zu", mr->addr,
		     mr->length, buf, len);
		ibv_dereg_mr(mr);
		return;
	}
	lkey = mr->lkey;
	err = ibv_dereg_mr(mr);
	if (err) {
		fail(name, "ibv_dereg_mr: %s", strerror(err));
		return;
	}
	/* A new registration never gets the key of the old one. */
	again = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!again) {
		fail(name, "second ibv_reg_mr: %s", strerror(errno));
		return;
	}
	if (again->lkey == lkey)
		fail(name, "re-registration reuses lkey 0x%x", lkey);
	else if ((err = ibv_dereg_mr(again)))
		fail(name, "second ibv_dereg_mr: %s", strerror(err));
	else
		ok(name);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static long read_long(const char *path)
{
	long v = -1;
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static int write_long(const char *path, long v)
{
	FILE *f;
	int err;

	f = fopen(path, "w");
	if (!f)
		return -1;
	err = fprintf(f, "%ld\n", v) < 0;
	return fclose(f) || err ? -1 : 0;
}

static void check_mrs(struct ibv_pd *pd)
{
	static char small[4096] __attribute__((aligned(4096)));
	long hp_before;
	int huge = 0;
	void *buf;

	check_mr(pd, small, sizeof(small), "verbs-mr-4k");

	/* 2 MiB: one huge page when the guest can reserve one. */
	hp_before = read_long(HUGEPAGES);
	if (hp_before >= 0 && (hp_before >= 1 || !write_long(HUGEPAGES, 1)) &&
	    read_long(HUGEPAGES) >= 1) {
		buf = mmap(NULL, MR_2M, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
		huge = buf != MAP_FAILED;
	}
	if (huge) {
		memset(buf, 0x5a, MR_2M);
		check_mr(pd, buf, MR_2M, "verbs-mr-2m-hugepage");
		munmap(buf, MR_2M);
	} else if (!posix_memalign(&buf, MR_2M, MR_2M)) {
		memset(buf, 0x5a, MR_2M);
		check_mr(pd, buf, MR_2M, "verbs-mr-2m-aligned-no-hugepage");
		free(buf);
	} else {
		fail("verbs-mr-2m-aligned-no-hugepage", "no memory");
	}
	if (hp_before >= 0 && read_long(HUGEPAGES) != hp_before)
		write_long(HUGEPAGES, hp_before);

	buf = mmap(NULL, MR_LARGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		fail("verbs-mr-256m", "mmap: %s", strerror(errno));
	} else {
		check_mr(pd, buf, MR_LARGE, "verbs-mr-256m");
		munmap(buf, MR_LARGE);
	}
	/* The pair group boots guest a with 3 GiB (tests/vm/run.sh). */
	buf = mmap(NULL, MR_1G, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (buf == MAP_FAILED) {
		fail("verbs-mr-1g", "mmap: %s", strerror(errno));
	} else {
		long t0 = now_ms();

		check_mr(pd, buf, MR_1G, "verbs-mr-1g");
		printf("info: 1 GiB MR registered twice in %ld ms\n",
		       now_ms() - t0);
		munmap(buf, MR_1G);
	}
}

/* Error paths: each must fail with the errno ib_core users expect. */
static void check_errors(struct ibv_device *dev, struct ibv_context *ctx,
			 struct ibv_pd *pd, struct ibv_cq *cq)
{
	static char buf[4096] __attribute__((aligned(4096)));
	struct ibv_qp_init_attr qa = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_device_attr da;
	struct ibv_context *ctx2;
	struct ibv_pd *pd2;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct ibv_cq *c;
	int err;

	errno = 0;
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_WRITE);
	expect_errno("verbs-mr-remote-write-no-local-einval", !!mr, errno, EINVAL);
	if (mr)
		ibv_dereg_mr(mr);
	errno = 0;
	mr = ibv_reg_mr(pd, buf, 0, IBV_ACCESS_LOCAL_WRITE);
	expect_errno("verbs-mr-zero-length-einval", !!mr, errno, EINVAL);
	if (mr)
		ibv_dereg_mr(mr);

	err = ibv_query_device(ctx, &da);
	if (err) {
		fail("verbs-limits-einval", "ibv_query_device: %s", strerror(err));
		return;
	}
	errno = 0;
	c = ibv_create_cq(ctx, da.max_cqe + 1, NULL, NULL, 0);
	expect_errno("verbs-cq-over-max-cqe-einval", !!c, errno, EINVAL);
	if (c)
		ibv_destroy_cq(c);
	qa.cap.max_send_wr = da.max_qp_wr + 1;
	errno = 0;
	qp = ibv_create_qp(pd, &qa);
	expect_errno("verbs-qp-over-max-wr-einval", !!qp, errno, EINVAL);
	if (qp)
		ibv_destroy_qp(qp);
	qa.cap.max_send_wr = 1;
	qa.cap.max_send_sge = da.max_sge + 1;
	errno = 0;
	qp = ibv_create_qp(pd, &qa);
	expect_errno("verbs-qp-over-max-sge-einval", !!qp, errno, EINVAL);
	if (qp)
		ibv_destroy_qp(qp);
	qa.cap.max_send_sge = 1;

	/* A PD of another context with this context's CQ. */
	ctx2 = ibv_open_device(dev);
	pd2 = ctx2 ? ibv_alloc_pd(ctx2) : NULL;
	if (!pd2) {
		fail("verbs-qp-foreign-pd-fails", "second context/PD: %s",
		     strerror(errno));
	} else {
		errno = 0;
		qp = ibv_create_qp(pd2, &qa);
		if (qp) {
			fail("verbs-qp-foreign-pd-fails", "ibv_create_qp succeeded");
			ibv_destroy_qp(qp);
		} else {
			printf("info: QP with another context's PD: %s\n",
			       strerror(errno));
			ok("verbs-qp-foreign-pd-fails");
		}
	}
	if (pd2)
		ibv_dealloc_pd(pd2);
	if (ctx2)
		ibv_close_device(ctx2);

	/* A CQ that a QP still uses cannot go. */
	c = ibv_create_cq(ctx, CQ_SIZE, NULL, NULL, 0);
	qa.send_cq = qa.recv_cq = c;
	qp = c ? ibv_create_qp(pd, &qa) : NULL;
	if (!qp) {
		fail("verbs-cq-in-use-ebusy", "CQ/QP: %s", strerror(errno));
	} else {
		err = ibv_destroy_cq(c);
		expect_errno("verbs-cq-in-use-ebusy", !err, err, EBUSY);
		if (!err)
			c = NULL;
		ibv_destroy_qp(qp);
	}
	if (c && (err = ibv_destroy_cq(c)))
		fail("verbs-cq-in-use-ebusy", "destroy after the QP: %s",
		     strerror(err));
}

/* ---- leak checks -------------------------------------------------------- */

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
 * LEAK_CYCLES create/destroy cycles of a CQ, an RC QP and a 4 KiB MR, then
 * LEAK_BIG_CYCLES registrations of a 256 MiB MR: the device's object counts,
 * rdma restrack's counts and this process's pinned memory end where they
 * started (and the counters do move while an object exists).
 */
/*
 * LEAK_CYCLES PD alloc/free cycles. The device's PD count is not among the
 * hw_counters, so rdma resource show's pd count is compared: one more with
 * a PD held, the same afterwards.
 */
static void check_leak_pd(const char *dev, struct ibv_context *ctx)
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

static void check_leaks(const char *dev, struct ibv_context *ctx,
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


/*
 * The device's KITE_REG_CAP_FLAGS (BAR0, read-only) through the PCI
 * function's sysfs resource0; -1 when it cannot be read. The driver offers
 * a QP type only when the device has its cap bit (KITE_DEV_CAP_UD for UD).
 */
static long dev_cap_flags(const char *dev)
{
	char path[256];
	volatile uint32_t *bar;
	long caps;
	int fd;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device/resource0", dev);
	fd = open(path, O_RDONLY | O_SYNC);
	if (fd < 0)
		return -1;
	bar = mmap(NULL, KITE_REG_CAP_FLAGS + 4, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (bar == MAP_FAILED)
		return -1;
	caps = bar[KITE_REG_CAP_FLAGS / 4];
	munmap((void *)bar, KITE_REG_CAP_FLAGS + 4);
	return caps;
}

/* Without KITE_DEV_CAP_UD: creating a UD QP must fail with EOPNOTSUPP. */
static void check_qp_ud_refused(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp *qp;

	errno = 0;
	qp = ibv_create_qp(pd, &ia);
	if (qp) {
		ibv_destroy_qp(qp);
		fail("verbs-qp-ud-create-destroy",
		     "a UD QP was created although the device lacks KITE_DEV_CAP_UD");
	} else if (errno != EOPNOTSUPP) {
		fail("verbs-qp-ud-create-destroy", "ibv_create_qp(UD): %s, want EOPNOTSUPP",
		     strerror(errno));
	} else {
		ok("verbs-qp-ud-create-destroy");
	}
	printf("skip verbs-qp-ud-walk: the device has no KITE_DEV_CAP_UD\n");
	printf("skip verbs-qp-ud-sqd: the device has no KITE_DEV_CAP_UD\n");
	fflush(stdout);
}

static void check_objects(struct ibv_device *dev, struct ibv_context *ctx,
			  const char *gid_text)
{
	long caps = dev_cap_flags(ibv_get_device_name(dev));
	const char *name = ibv_get_device_name(dev);
	union ibv_gid gid = {};
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	long start = now_ms(), t0;
	int gid_index = -1;

	if (inet_pton(AF_INET6, gid_text, gid.raw) == 1)
		gid_index = find_gid(ctx, &gid);

	check_cq(ctx);
	check_cq_resize_notify(ctx);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, CQ_SIZE, NULL, NULL, 0);
	if (!pd || !cq) {
		fail("verbs-objects", "PD/CQ for the QP checks: %s",
		     strerror(errno));
		if (cq)
			ibv_destroy_cq(cq);
		if (pd)
			ibv_dealloc_pd(pd);
		return;
	}
	check_qp_create(pd, cq, IBV_QPT_RC, "verbs-qp-rc-create-destroy");
	check_qp_create(pd, cq, IBV_QPT_UC, "verbs-qp-uc-create-destroy");
	if (caps < 0) {
		/*
		 * BAR0 not mappable from user space (a strict devmem kernel
		 * keeps a driver's regions to itself): learn it from the
		 * driver, which must then refuse with exactly EOPNOTSUPP.
		 */
		struct ibv_qp_init_attr ia = {
			.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
			.cap = { .max_send_wr = 4, .max_recv_wr = 4,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};
		struct ibv_qp *qp;

		errno = 0;
		qp = ibv_create_qp(pd, &ia);
		if (qp)
			ibv_destroy_qp(qp);
		else if (errno == EOPNOTSUPP)
			caps = KITE_DEV_CAP_RC | KITE_DEV_CAP_UC;	/* no UD */
		printf("info: KITE_REG_CAP_FLAGS not readable; UD QP %s\n",
		       qp ? "created: UD offered" : strerror(errno));
	} else {
		printf("info: device cap flags %#lx\n", caps);
	}
	if (caps < 0 || (caps & KITE_DEV_CAP_UD))
		check_qp_create(pd, cq, IBV_QPT_UD, "verbs-qp-ud-create-destroy");
	else
		check_qp_ud_refused(pd, cq);
	if (gid_index < 0) {
		fail("verbs-qp-rc-walk", "%s not in the GID table", gid_text);
		fail("verbs-qp-uc-walk", "no GID");
	} else {
		check_qp_walk(pd, cq, IBV_QPT_RC, &gid, gid_index,
			      "verbs-qp-rc-walk");
		check_qp_walk(pd, cq, IBV_QPT_UC, &gid, gid_index,
			      "verbs-qp-uc-walk");
	}
	if (caps < 0 || (caps & KITE_DEV_CAP_UD))
		check_qp_walk(pd, cq, IBV_QPT_UD, &gid, gid_index, "verbs-qp-ud-walk");
	check_qp_illegal(pd, cq, &gid, gid_index < 0 ? 0 : gid_index);
	check_mrs(pd);
	check_errors(dev, ctx, pd, cq);
	t0 = now_ms();
	check_leaks(name, ctx, pd);
	check_leak_pd(name, ctx);
	printf("info: object checks %ld ms, of which leak loops %ld ms\n",
	       now_ms() - start, now_ms() - t0);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
}

static int basic(const char *name, const char *gid_text)
{
	struct ibv_device **list, *dev = NULL;
	struct ibv_context *ctx;
	int i, n, all, db, err;

	list = ibv_get_device_list(&n);
	if (!list) {
		fail("verbs-open", "ibv_get_device_list: %s", strerror(errno));
		return 1;
	}
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			dev = list[i];
	if (!dev) {
		fail("verbs-open", "%s not among %d verbs devices", name, n);
		ibv_free_device_list(list);
		return 1;
	}

	ctx = ibv_open_device(dev);
	if (!ctx) {
		fail("verbs-open", "ibv_open_device(%s): %s", name,
		     strerror(errno));
		ibv_free_device_list(list);
		return 1;
	}
	ok("verbs-open");

	/* The provider maps exactly one doorbell page of its context. */
	uverbs_maps(&all, &db);
	if (all == 1 && db == 1)
		ok("verbs-doorbell-mapped");
	else
		fail("verbs-doorbell-mapped",
		     "%d mappings of %s*, %d of them one writable shared page",
		     all, UVERBS_DEV, db);

	check_device(ctx, name);
	check_port(ctx, gid_text);
	check_pds(ctx);
	check_objects(dev, ctx, gid_text);

	err = ibv_close_device(ctx);
	uverbs_maps(&all, &db);
	if (!err && all == 0)
		ok("verbs-close-unmaps");
	else
		fail("verbs-close-unmaps", "ibv_close_device: %d, %d mappings left",
		     err, all);

	/* Device contexts and doorbell pages are given back on close. */
	for (i = 0; i < CTX_CYCLES; i++) {
		ctx = ibv_open_device(dev);
		if (!ctx) {
			fail("verbs-context-cycles", "open #%d: %s", i + 1,
			     strerror(errno));
			break;
		}
		err = ibv_close_device(ctx);
		if (err) {
			fail("verbs-context-cycles", "close #%d: %d", i + 1, err);
			break;
		}
	}
	if (i == CTX_CYCLES)
		ok("verbs-context-cycles");

	ibv_free_device_list(list);
	return failures ? 1 : 0;
}

static void limits(void)
{
	printf("KITE_DEF_MAX_QP=%u\n", KITE_DEF_MAX_QP);
	printf("KITE_DEF_MAX_CQ=%u\n", KITE_DEF_MAX_CQ);
	printf("KITE_DEF_MAX_MR=%u\n", KITE_DEF_MAX_MR);
	printf("KITE_DEF_MAX_PD=%u\n", KITE_DEF_MAX_PD);
	printf("KITE_DEF_MAX_GID=%u\n", KITE_DEF_MAX_GID);
	printf("KITE_PCI_VENDOR_ID=0x%04x\n", KITE_PCI_VENDOR_ID);
	printf("KITE_PCI_DEVICE_ID=0x%04x\n", KITE_PCI_DEVICE_ID);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "limits")) {
		limits();
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "basic"))
		return basic(argv[2], argv[3]);
	fprintf(stderr, "usage: %s limits | basic DEV GID\n", argv[0]);
	return 2;
}
