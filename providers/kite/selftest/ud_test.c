// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Provider self-test: address handles and UD sends and receives.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "selftest.h"

static const uint8_t test_dmac[6] = { 0x02, 0x4b, 0x54, 0x00, 0x00, 0x02 };

/* An AH attribute for @dgid, as ibv_ud_pingpong builds one. */
static struct ibv_ah_attr ah_attr(const uint8_t dgid[16])
{
	struct ibv_ah_attr a = {
		.is_global = 1, .port_num = 1, .sl = 5, .dlid = 0,
		.grh = { .sgid_index = 3, .hop_limit = 64,
			 .traffic_class = 0x28, .flow_label = 0x7123456 },
	};

	memcpy(a.grh.dgid.raw, dgid, 16);
	return a;
}

static const uint8_t gid_v4[16] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 2,
};
static const uint8_t gid_v6[16] = {
	0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
};

static void kernel_ah_answer(uint8_t net_type)
{
	memset(&kernel_ah, 0, sizeof(kernel_ah));
	memcpy(kernel_ah.resp.dmac, test_dmac, 6);
	kernel_ah.resp.net_type = net_type;
}

/* The address vector an AH must carry for ah_attr(@dgid). */
static bool av_is(const struct kite_av *av, const uint8_t dgid[16],
		  uint8_t net_type)
{
	return !memcmp(av->dgid, dgid, 16) && !memcmp(av->dmac, test_dmac, 6) &&
	       av->sgid_index == 3 && av->net_type == net_type &&
	       av->hop_limit == 64 && av->traffic_class == 0x28 &&
	       av->sl == 5 && av->reserved == 0 &&
	       le32toh(av->flow_label) == 0x23456;
}

/* IPv4 and IPv6 AHs: the command, and the AV built from attr + answer. */
int test_ah_create(void)
{
	struct fake *f = fake_new(IBV_QPT_UD, 4, 8);
	struct ibv_pd pd = { .context = &f->ctx->ibv_ctx.context };
	struct ibv_ah_attr a = ah_attr(gid_v4);
	struct ibv_ah *ah;
	int ok = 1;

	kernel_ah_answer(KITE_NET_IPV4);
	ah = kite_create_ah(&pd, &a);
	CHECK(ah != NULL);
	if (!ah) {
		fake_free(f);
		return 0;
	}
	CHECK(kernel_ah.creates == 1);
	CHECK(kernel_ah.resp_size == sizeof(struct ib_uverbs_create_ah_resp) +
				     sizeof(struct kite_create_ah_resp));
	CHECK(!memcmp(&kernel_ah.attr, &a, sizeof(a)));
	CHECK(ah->handle == 0x55);
	CHECK(av_is(&to_kite_ah(ah)->av, gid_v4, KITE_NET_IPV4));
	CHECK(kite_destroy_ah(ah) == 0 && kernel_ah.destroys == 1);

	a = ah_attr(gid_v6);
	kernel_ah_answer(KITE_NET_IPV6);
	ah = kite_create_ah(&pd, &a);
	CHECK(ah != NULL);
	if (ah) {
		CHECK(av_is(&to_kite_ah(ah)->av, gid_v6, KITE_NET_IPV6));
		/* A failed destroy keeps the AH (the caller may retry). */
		kernel_ah.destroy_err = EBUSY;
		CHECK(kite_destroy_ah(ah) == EBUSY);
		kernel_ah.destroy_err = 0;
		CHECK(kite_destroy_ah(ah) == 0 && kernel_ah.destroys == 1);
	}

	/*
	 * UCX's ud_verbs on RoCE: DLID 0xC000 (ignored on RoCE), all 32 flow
	 * label bits set, DSCP 26 with ECT(0), hop limit 255. Passed to the
	 * kernel as given; the AV keeps the 20 bits of a flow label.
	 */
	a = ah_attr(gid_v4);
	a.dlid = 0xc000;
	a.sl = 0;
	a.grh.sgid_index = 1;
	a.grh.flow_label = UINT32_MAX;
	a.grh.traffic_class = 106;
	a.grh.hop_limit = 255;
	kernel_ah_answer(KITE_NET_IPV4);
	ah = kite_create_ah(&pd, &a);
	CHECK(ah != NULL);
	if (ah) {
		const struct kite_av *av = &to_kite_ah(ah)->av;

		CHECK(!memcmp(&kernel_ah.attr, &a, sizeof(a)));
		CHECK(le32toh(av->flow_label) == KITE_AV_FLOW_LABEL_MASK);
		CHECK(av->traffic_class == 106 && av->hop_limit == 255);
		CHECK(av->sgid_index == 1 && av->sl == 0);
		CHECK(kite_destroy_ah(ah) == 0 && kernel_ah.destroys == 1);
	}
	CHECK(kernel_ah.logs == 0);
	fake_free(f);
	return ok;
}

/* Refusals: before the kernel (attr), by the kernel, after (its answer). */
int test_ah_errors(void)
{
	struct fake *f = fake_new(IBV_QPT_UD, 4, 8);
	struct ibv_pd pd = { .context = &f->ctx->ibv_ctx.context };
	struct ibv_ah_attr a;
	static const uint8_t zero[6];
	int ok = 1;

	/* No GRH on RoCE, or another port: EINVAL, no command. */
	kernel_ah_answer(KITE_NET_IPV4);
	a = ah_attr(gid_v4);
	a.is_global = 0;
	errno = 0;
	CHECK(kite_create_ah(&pd, &a) == NULL && errno == EINVAL);
	a = ah_attr(gid_v4);
	a.port_num = 2;
	errno = 0;
	CHECK(kite_create_ah(&pd, &a) == NULL && errno == EINVAL);
	a.port_num = 0;
	errno = 0;
	CHECK(kite_create_ah(&pd, &a) == NULL && errno == EINVAL);
	CHECK(kernel_ah.creates == 0);

	/* The kernel refuses (no route, bad GID index ...): its errno. */
	a = ah_attr(gid_v4);
	kernel_ah.err = ENETUNREACH;
	CHECK(kite_create_ah(&pd, &a) == NULL && errno == ENETUNREACH);
	CHECK(kernel_ah.creates == 1 && kernel_ah.destroys == 0);

	/* A bad answer: EPROTO, logged, the kernel AH destroyed again. */
	kernel_ah_answer(7);
	CHECK(kite_create_ah(&pd, &a) == NULL && errno == EPROTO);
	CHECK(kernel_ah.destroys == 1 && kernel_ah.logs == 1);
	kernel_ah_answer(KITE_NET_IPV4);
	memset(kernel_ah.resp.dmac, 0, 6);
	CHECK(kite_create_ah(&pd, &a) == NULL && errno == EPROTO);
	CHECK(kernel_ah.destroys == 1 && kernel_ah.logs == 1);

	/* Destination GID of the other network type than the source GID. */
	kernel_ah_answer(KITE_NET_IPV6);
	CHECK(kite_create_ah(&pd, &a) == NULL && errno == EINVAL);
	CHECK(kernel_ah.destroys == 1);
	a = ah_attr(gid_v6);
	kernel_ah_answer(KITE_NET_IPV4);
	CHECK(kite_create_ah(&pd, &a) == NULL && errno == EINVAL);
	CHECK(kernel_ah.destroys == 1);

	/* The builder alone. */
	{
		struct kite_av av;

		memset(&av, 0xee, sizeof(av));
		a = ah_attr(gid_v6);
		a.grh.flow_label = 0xfffff;
		CHECK(kite_av_build(&a, test_dmac, KITE_NET_IPV6, &av) == 0);
		CHECK(le32toh(av.flow_label) == 0xfffff && av.reserved == 0);
		CHECK(kite_av_build(&a, zero, KITE_NET_IPV6, &av) == EPROTO);
		CHECK(kite_av_build(&a, test_dmac, 2, &av) == EPROTO);
	}
	fake_free(f);
	return ok;
}

/* Make a UD AH for the tests below (through kite_create_ah). */
static struct ibv_ah *ud_ah(struct fake *f, const uint8_t dgid[16],
			    uint8_t net_type)
{
	static struct ibv_pd pd;
	struct ibv_ah_attr a = ah_attr(dgid);

	pd.context = &f->ctx->ibv_ctx.context;
	kernel_ah_answer(net_type);
	return kite_create_ah(&pd, &a);
}

/*
 * UD post_send: SEND with SGEs and SEND_IMM inline, the UD segment (the
 * AH's AV, remote QPN, Q_Key; a Q_Key with bit 31 set passed as is for
 * the device to replace by the QP's own), data after the 56 bytes.
 */
int test_ud_post_send(void)
{
	struct fake *f = fake_new(IBV_QPT_UD, 8, 8);
	struct ibv_ah *ah4 = ud_ah(f, gid_v4, KITE_NET_IPV4);
	struct ibv_ah *ah6 = ud_ah(f, gid_v6, KITE_NET_IPV6);
	struct ibv_sge sg[4] = {
		{ .addr = 0x1000, .length = 1000, .lkey = 0x101 },
		{ .addr = 0x3000, .length = 24, .lkey = 0x202 },
		{ .addr = 0x5000, .length = 8, .lkey = 0x303 },
		{ .addr = 0x7000, .length = 1, .lkey = 0x404 },
	};
	struct ibv_sge in;
	struct ibv_send_wr wr[3], *bad = NULL;
	struct kite_sq_wqe_hdr *h;
	struct kite_wqe_ud *ud;
	struct kite_sge *s;
	int ok = 1, i;

	CHECK(ah4 && ah6);
	if (!ah4 || !ah6)
		return 0;
	for (i = 0; i < 72; i++)
		f->mem[i] = 0x80 + i;
	in = (struct ibv_sge){ .addr = (uintptr_t)f->mem, .length = 72 };

	wr[0] = send_wr(300, IBV_WR_SEND, sg, 4, IBV_SEND_SIGNALED);
	wr[0].wr.ud.ah = ah4;
	wr[0].wr.ud.remote_qpn = 0xabcdef;
	wr[0].wr.ud.remote_qkey = 0x11111111;
	wr[1] = send_wr(301, IBV_WR_SEND_WITH_IMM, &in, 1,
			IBV_SEND_INLINE | IBV_SEND_SOLICITED);
	wr[1].imm_data = htobe32(0xcafe0001);
	wr[1].wr.ud.ah = ah6;
	wr[1].wr.ud.remote_qpn = 1;
	wr[1].wr.ud.remote_qkey = KITE_WQE_UD_QKEY_OWN | 1;
	wr[2] = send_wr(302, IBV_WR_SEND, sg, 0, 0);	/* zero bytes */
	wr[2].wr.ud.ah = ah4;
	wr[2].wr.ud.remote_qpn = KITE_QPN_MASK;
	wr[2].wr.ud.remote_qkey = 0x80010000;
	wr[0].next = &wr[1];
	wr[1].next = &wr[2];

	CHECK(kite_post_send(&f->qp->vqp.qp, wr, &bad) == 0);
	CHECK(db_read(f, KITE_DB_SQ) == kite_db_make(QPN, 0, 3));

	h = (void *)sq_wqe(f, 0);
	CHECK(h->opcode == KITE_WQE_SEND && h->flags == KITE_WQE_F_SIGNALED);
	CHECK(h->num_sge == 4 && h->inline_len == 0);
	ud = (void *)(h + 1);
	CHECK(!memcmp(&ud->av, &to_kite_ah(ah4)->av, sizeof(ud->av)));
	CHECK(av_is(&ud->av, gid_v4, KITE_NET_IPV4));
	CHECK(le32toh(ud->remote_qpn) == 0xabcdef);
	CHECK(le32toh(ud->remote_qkey) == 0x11111111);
	/* SGEs at byte 56 of the WQE (hardware.rst). */
	s = (void *)((uint8_t *)h + 56);
	CHECK((void *)(ud + 1) == (void *)s);
	CHECK(le64toh(s[0].addr) == 0x1000 && le32toh(s[0].length) == 1000 &&
	      le32toh(s[0].lkey) == 0x101);
	CHECK(le64toh(s[3].addr) == 0x7000 && le32toh(s[3].lkey) == 0x404);

	h = (void *)sq_wqe(f, 1);
	CHECK(h->opcode == KITE_WQE_SEND_IMM);
	CHECK(h->flags == (KITE_WQE_F_INLINE | KITE_WQE_F_SOLICITED));
	CHECK(h->num_sge == 0 && le16toh(h->inline_len) == 72);
	CHECK(memcmp(&h->imm_data, &wr[1].imm_data, 4) == 0);
	ud = (void *)(h + 1);
	CHECK(av_is(&ud->av, gid_v6, KITE_NET_IPV6));
	CHECK(le32toh(ud->remote_qpn) == 1);
	CHECK(le32toh(ud->remote_qkey) == 0x80000001);
	CHECK(memcmp((uint8_t *)h + 56, f->mem, 72) == 0);

	h = (void *)sq_wqe(f, 2);
	CHECK(h->opcode == KITE_WQE_SEND && h->num_sge == 0 && h->flags == 0);
	ud = (void *)(h + 1);
	CHECK(le32toh(ud->remote_qpn) == KITE_QPN_MASK);
	CHECK(le32toh(ud->remote_qkey) == 0x80010000);

	/* The send completions: slot 2 retires 0..2 (0 signaled). */
	{
		struct ibv_wc wc[4];

		dev_cqe(f, QPN, 0, KITE_CQE_SEND, KITE_CQE_SUCCESS, 1033, 0, 0);
		CHECK(kite_poll_cq(&f->cq->vcq.cq, 4, wc) == 1);
		CHECK(wc[0].wr_id == 300 && wc[0].opcode == IBV_WC_SEND);
		CHECK(wc[0].wc_flags == 0 && wc[0].byte_len == 1033);
	}
	CHECK(kite_destroy_ah(ah4) == 0 && kite_destroy_ah(ah6) == 0);
	fake_free(f);
	return ok;
}

/* UD refuses every opcode but the sends, a missing AH, a 25-bit QPN. */
int test_ud_post_errors(void)
{
	static const enum ibv_wr_opcode bad_ops[] = {
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM,
		IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP,
		IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_LOCAL_INV,
		IBV_WR_BIND_MW, IBV_WR_SEND_WITH_INV, IBV_WR_TSO,
	};
	struct fake *f = fake_new(IBV_QPT_UD, 4, 8);
	struct ibv_ah *ah = ud_ah(f, gid_v4, KITE_NET_IPV4);
	struct ibv_sge sg = { .addr = 0x1000, .length = 8, .lkey = 1 };
	struct ibv_send_wr wr[2], *bad = NULL;
	unsigned int i;
	int ok = 1;

	CHECK(ah != NULL);
	if (!ah)
		return 0;
	/* A good SEND, then an RDMA WRITE: the SEND is posted, not the WRITE. */
	wr[0] = send_wr(1, IBV_WR_SEND, &sg, 1, 0);
	wr[0].wr.ud.ah = ah;
	wr[0].wr.ud.remote_qpn = 2;
	wr[1] = send_wr(2, IBV_WR_RDMA_WRITE, &sg, 1, IBV_SEND_SIGNALED);
	wr[1].wr.rdma.remote_addr = 0x9000;
	wr[1].wr.rdma.rkey = 3;
	wr[0].next = &wr[1];
	CHECK(kite_post_send(&f->qp->vqp.qp, wr, &bad) == EINVAL &&
	      bad == &wr[1]);
	CHECK(f->qp->sq.pi == 1);
	CHECK(db_read(f, KITE_DB_SQ) == kite_db_make(QPN, 0, 1));

	db_clear(f);
	for (i = 0; i < sizeof(bad_ops) / sizeof(bad_ops[0]); i++) {
		wr[0] = send_wr(3, bad_ops[i], &sg, 1, 0);
		wr[0].wr.ud.ah = ah;
		bad = NULL;
		CHECK(kite_post_send(&f->qp->vqp.qp, wr, &bad) == EINVAL &&
		      bad == &wr[0]);
	}
	wr[0] = send_wr(4, IBV_WR_SEND, &sg, 1, 0);
	wr[0].wr.ud.ah = NULL;
	CHECK(kite_post_send(&f->qp->vqp.qp, wr, &bad) == EINVAL &&
	      bad == &wr[0]);
	wr[0].wr.ud.ah = ah;
	wr[0].wr.ud.remote_qpn = 0x1000000;
	CHECK(kite_post_send(&f->qp->vqp.qp, wr, &bad) == EINVAL &&
	      bad == &wr[0]);
	/* Too many SGEs (4) and too much inline (72) on UD as on RC. */
	wr[0].wr.ud.remote_qpn = 2;
	wr[0].num_sge = 5;
	CHECK(kite_post_send(&f->qp->vqp.qp, wr, &bad) == EINVAL);
	wr[0].num_sge = 1;
	sg.addr = (uintptr_t)f->mem;
	sg.length = 73;
	wr[0].send_flags = IBV_SEND_INLINE;
	CHECK(kite_post_send(&f->qp->vqp.qp, wr, &bad) == EINVAL);
	CHECK(f->qp->sq.pi == 1 && db_read(f, KITE_DB_SQ) == 0);
	CHECK(kite_destroy_ah(ah) == 0);
	fake_free(f);
	return ok;
}

/* The device side of a UD receive CQE (src_qp, net_hdr, smac), flags last. */
static void dev_cqe_ud(struct fake *f, uint16_t wqe_idx, uint8_t status,
		       uint32_t byte_len, uint8_t flags, uint32_t imm,
		       uint32_t src_qp, uint8_t net_hdr)
{
	struct kite_cqe *cqe = (struct kite_cqe *)f->cq->ring.buf +
			       kite_ring_slot(f->dev_cq_pi, f->cq->log_depth);

	memset(cqe, 0, offsetof(struct kite_cqe, flags));
	cqe->qpn = htole32(QPN);
	cqe->wqe_idx = htole16(wqe_idx);
	cqe->opcode = KITE_CQE_RECV;
	cqe->status = status;
	cqe->byte_len = htole32(byte_len);
	cqe->imm_data = imm;
	cqe->src_qp = htole32(src_qp);
	cqe->net_hdr = net_hdr;
	memcpy(cqe->smac, test_dmac, 6);
	cqe->flags = flags | kite_ring_phase(f->dev_cq_pi, f->cq->log_depth);
	f->dev_cq_pi++;
}

/*
 * UD receives: GRH flag, src_qp, pkey_index, imm; sl the RoCE packet type
 * of the CQE's network header as ConnectX reports it (0xA RoCEv2/IPv4,
 * 0x9 RoCEv2/IPv6: UCX 1.13 takes any other low three bits than 2 for
 * IPv6), 0 on a flush.
 */
int test_ud_poll(void)
{
	struct fake *f = fake_new(IBV_QPT_UD, 4, 8);
	struct ibv_sge sg = { .addr = 0xa000, .length = KITE_UD_GRH_LEN + 1024, .lkey = 7 };
	struct ibv_recv_wr wr[3] = {}, *bad = NULL;
	struct ibv_wc wc[4];
	int ok = 1, i;

	for (i = 0; i < 3; i++) {
		wr[i].wr_id = 500 + i;
		wr[i].sg_list = &sg;
		wr[i].num_sge = 1;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	CHECK(kite_post_recv(&f->qp->vqp.qp, wr, &bad) == 0);
	CHECK(db_read(f, KITE_DB_RQ) == kite_db_make(QPN, 0, 3));

	dev_cqe_ud(f, 0, KITE_CQE_SUCCESS, KITE_UD_GRH_LEN + 100,
		   KITE_CQE_F_GRH | KITE_CQE_F_IMM, htobe32(0x0a0b0c0d),
		   0x345678, KITE_CQE_NET_IPV4);
	dev_cqe_ud(f, 1, KITE_CQE_SUCCESS, KITE_UD_GRH_LEN + 1024, KITE_CQE_F_GRH, 0, 0x11,
		   KITE_CQE_NET_IPV6);
	dev_cqe_ud(f, 2, KITE_CQE_WR_FLUSH_ERR, 0, 0, 0, 0, 0);
	memset(wc, 0xa5, sizeof(wc));
	CHECK(kite_poll_cq(&f->cq->vcq.cq, 4, wc) == 3);
	CHECK(wc[0].wr_id == 500 && wc[0].status == IBV_WC_SUCCESS);
	CHECK(wc[0].opcode == IBV_WC_RECV && wc[0].byte_len == 140);
	CHECK(wc[0].qp_num == QPN && wc[0].src_qp == 0x345678);
	CHECK(wc[0].wc_flags == (IBV_WC_GRH | IBV_WC_WITH_IMM));
	CHECK(wc[0].imm_data == htobe32(0x0a0b0c0d));
	CHECK(wc[0].sl == 0xa && wc[0].pkey_index == 0);
	CHECK(wc[0].slid == 0 && wc[0].dlid_path_bits == 0);
	CHECK(wc[1].wr_id == 501 && wc[1].byte_len == 1064);
	CHECK(wc[1].wc_flags == IBV_WC_GRH && wc[1].imm_data == 0);
	CHECK(wc[1].src_qp == 0x11 && wc[1].sl == 0x9);
	CHECK(wc[2].wr_id == 502 && wc[2].status == IBV_WC_WR_FLUSH_ERR);
	CHECK(wc[2].wc_flags == 0 && wc[2].sl == 0);
	CHECK(f->qp->rq.ci == 3);
	fake_free(f);
	return ok;
}
