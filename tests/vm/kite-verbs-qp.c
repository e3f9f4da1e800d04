// SPDX-License-Identifier: GPL-2.0
/*
 * kite-verbs' QP state walks: RC, UC and UD QPs through RESET, INIT, RTR and
 * RTS (RC and UD also through SQD and back, RC then to ERR and RESET), each
 * step checked with ibv_query_qp, and transitions the spec forbids.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <arpa/inet.h>
#include <errno.h>

#include "kite-verbs.h"

#define MTU_1024	IBV_MTU_1024
#define TEST_QKEY	0x11111111
#define TEST_SQ_PSN	0x123456
#define TEST_RQ_PSN	0x654321
#define TEST_TIMEOUT	14
#define TEST_RETRY	7
#define TEST_MIN_RNR	12

/* Index of GID (binary) in port 1's table, -1 when absent. */
int find_gid(struct ibv_context *ctx, const union ibv_gid *want)
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
void check_qp_walk(struct ibv_pd *pd, struct ibv_cq *cq,
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
void check_qp_illegal(struct ibv_pd *pd, struct ibv_cq *cq,
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


static const char *state_name(enum ibv_qp_state s)
{
	static const char *const names[] = {
		[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT",
		[IBV_QPS_RTR] = "RTR", [IBV_QPS_RTS] = "RTS",
		[IBV_QPS_SQD] = "SQD", [IBV_QPS_SQE] = "SQE",
		[IBV_QPS_ERR] = "ERR",
	};

	return (unsigned int)s < sizeof(names) / sizeof(names[0]) && names[s] ?
	       names[s] : "UNKNOWN";
}

/*
 * qp-hold: an RC QP walked to RTS on a path to itself, then what
 * ibv_query_qp reports of it as one line in the form of the driver's
 * debugfs QP dump ("qpn=N state=S sq_psn=N rq_psn=N dest_qpn=N"), and
 * the QP kept until stdin ends, so that a script compares the two.
 */
int qp_hold(struct ibv_context *ctx, const char *gid_text)
{
	struct ibv_qp_init_attr init;
	struct ibv_pd *pd = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_qp *qp = NULL;
	struct ibv_qp_attr a;
	union ibv_gid gid;
	int gidx, err = -1;
	char buf[64];

	if (inet_pton(AF_INET6, gid_text, gid.raw) != 1 ||
	    (gidx = find_gid(ctx, &gid)) < 0) {
		fprintf(stderr, "qp-hold: GID %s not on port 1\n", gid_text);
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, CQ_SIZE, NULL, NULL, 0) : NULL;
	qp = cq ? make_qp(pd, cq, IBV_QPT_RC, NULL) : NULL;
	if (!qp) {
		fprintf(stderr, "qp-hold: PD, CQ or QP: %s\n", strerror(errno));
		goto out;
	}
	init_attr(&a, IBV_QPT_RC);
	err = to_state(qp, &a, INIT_MASK(IBV_QPT_RC), IBV_QPS_INIT);
	if (!err) {
		rtr_attr(&a, qp, &gid, gidx);
		err = to_state(qp, &a, RTR_MASK_RC, IBV_QPS_RTR);
	}
	if (!err) {
		rts_attr(&a);
		err = to_state(qp, &a, RTS_MASK_RC, IBV_QPS_RTS);
	}
	if (!err)
		err = ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
				   IBV_QP_RQ_PSN | IBV_QP_DEST_QPN, &init);
	if (err) {
		fprintf(stderr, "qp-hold: modify or query: %s\n", strerror(err));
		goto out;
	}
	printf("qpn=%u state=%s sq_psn=%u rq_psn=%u dest_qpn=%u\n",
	       qp->qp_num, state_name(a.qp_state), a.sq_psn, a.rq_psn,
	       a.dest_qp_num);
	fflush(stdout);
	while (fgets(buf, sizeof(buf), stdin))
		;
out:
	if (qp && ibv_destroy_qp(qp))
		err = -1;
	if (cq && ibv_destroy_cq(cq))
		err = -1;
	if (pd && ibv_dealloc_pd(pd))
		err = -1;
	return err ? 1 : 0;
}
