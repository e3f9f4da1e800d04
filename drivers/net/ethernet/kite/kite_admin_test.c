// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite kite_admin: the encoding of every admin command and the
 * decoding of the results, completion matching on a fake ring, the
 * completion status to errno mapping, and the admin counters debugfs shows.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <kunit/test.h>
#include <linux/etherdevice.h>
#include <linux/kite/compat.h>

#include "kite.h"

static const u8 test_mac[ETH_ALEN] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };

static void kite_test_hdr(struct kunit *test, const struct kite_aq_cmd *cmd,
			  u8 opcode, u32 uctx)
{
	const u8 *raw = (const u8 *)cmd;

	KUNIT_EXPECT_EQ(test, raw[0], opcode);
	KUNIT_EXPECT_EQ(test, raw[1], 0);		/* flags */
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(raw + 4), uctx);
}

static void kite_test_enc_query(struct kunit *test)
{
	static const u8 ops[] = { KITE_CMD_QUERY_DEVICE, KITE_CMD_QUERY_PORT,
				  KITE_CMD_QUERY_STATS };
	struct kite_aq_cmd cmd;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		memset(&cmd, 0xa5, sizeof(cmd));
		kite_enc_query(&cmd, ops[i], ops[i] == KITE_CMD_QUERY_PORT);
		kite_test_hdr(test, &cmd, ops[i], 0);
		KUNIT_EXPECT_PTR_EQ(test, kite_cmd_out_buf(&cmd),
				    &cmd.query.out);
		/* port byte follows the 16-byte result descriptor */
		KUNIT_EXPECT_EQ(test, cmd.raw[16],
				ops[i] == KITE_CMD_QUERY_PORT ? 1 : 0);
		KUNIT_EXPECT_TRUE(test, !memchr_inv(cmd.raw + 17, 0,
						    sizeof(cmd.raw) - 17));
	}
}

static void kite_test_enc_set_port(struct kunit *test)
{
	struct kite_aq_cmd cmd;

	kite_enc_set_port(&cmd, KITE_SET_PORT_MTU | KITE_SET_PORT_MAC, 9000,
			  test_mac);
	kite_test_hdr(test, &cmd, KITE_CMD_SET_PORT, 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw),
			KITE_SET_PORT_MTU | KITE_SET_PORT_MAC);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw + 4), 9000);
	KUNIT_EXPECT_EQ(test, memcmp(cmd.raw + 8, test_mac, ETH_ALEN), 0);
	KUNIT_EXPECT_EQ(test, cmd.raw[14], KITE_PORT_NUM);
	KUNIT_EXPECT_PTR_EQ(test, kite_cmd_out_buf(&cmd), NULL);

	/* Fields outside the mask stay zero. */
	kite_enc_set_port(&cmd, KITE_SET_PORT_MTU, 1500, test_mac);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw + 4), 1500);
	KUNIT_EXPECT_TRUE(test, is_zero_ether_addr(cmd.raw + 8));
	kite_enc_set_port(&cmd, KITE_SET_PORT_MAC, 1500, test_mac);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw + 4), 0);
}

static void kite_test_enc_create_eq(struct kunit *test)
{
	struct kite_aq_cmd cmd;

	kite_enc_create_eq(&cmd, 0x123456789000ULL, 8, KITE_MSIX_COMP_BASE + 1);
	kite_test_hdr(test, &cmd, KITE_CMD_CREATE_EQ, 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_le64(cmd.raw), 0x123456789000ULL);
	/* 256 entries of 16 bytes: one 4 KiB page (rings are CPU pages) */
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw + 8), 1);
	KUNIT_EXPECT_EQ(test, cmd.raw[12], PAGE_SHIFT);	/* page_shift */
	KUNIT_EXPECT_EQ(test, cmd.raw[13], KITE_PBL_LEVEL_DIRECT);
	KUNIT_EXPECT_EQ(test, cmd.raw[16], 8);	/* log_depth */
	KUNIT_EXPECT_EQ(test, get_unaligned_le16(cmd.raw + 18),
			KITE_MSIX_COMP_BASE + 1);

	kite_enc_create_eq(&cmd, 0x1000, 12, KITE_MSIX_COMP_BASE);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw + 8), 16);
	kite_enc_create_eq(&cmd, 0x1000, 2, KITE_MSIX_COMP_BASE);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw + 8), 1);
}

static void kite_test_enc_destroy(struct kunit *test)
{
	static const u8 ops[] = { KITE_CMD_DESTROY_EQ, KITE_CMD_DEALLOC_UCTX,
				  KITE_CMD_DEALLOC_PD };
	struct kite_aq_cmd cmd;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		kite_enc_destroy(&cmd, ops[i], 7, 0x00abcdef);
		kite_test_hdr(test, &cmd, ops[i], 7);
		KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw), 0x00abcdef);
		KUNIT_EXPECT_TRUE(test, !memchr_inv(cmd.raw + 4, 0,
						    sizeof(cmd.raw) - 4));
	}
}

static void kite_test_enc_alloc(struct kunit *test)
{
	static const u8 ops[] = { KITE_CMD_ALLOC_UCTX, KITE_CMD_ALLOC_PD };
	struct kite_aq_cmd cmd;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		memset(&cmd, 0xff, sizeof(cmd));
		kite_enc_hdr(&cmd, ops[i], 3);
		kite_test_hdr(test, &cmd, ops[i], 3);
		KUNIT_EXPECT_EQ(test, get_unaligned_le16(&cmd.hdr.cmd_id), 0);
		KUNIT_EXPECT_TRUE(test, !memchr_inv(cmd.raw, 0,
						    sizeof(cmd.raw)));
		KUNIT_EXPECT_PTR_EQ(test, kite_cmd_out_buf(&cmd), NULL);
	}
}

static void kite_test_enc_gid(struct kunit *test)
{
	u8 gid[16] = { [10] = 0xff, [11] = 0xff, 198, 18, 0, 1 };
	static const u8 ops[] = { KITE_CMD_ADD_GID, KITE_CMD_DEL_GID };
	struct kite_aq_cmd cmd;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		kite_enc_gid(&cmd, ops[i], gid, 5, KITE_GID_ROCE_V2_IPV4, 1);
		kite_test_hdr(test, &cmd, ops[i], 0);
		KUNIT_EXPECT_EQ(test, memcmp(cmd.raw, gid, 16), 0);
		KUNIT_EXPECT_EQ(test, get_unaligned_le16(cmd.raw + 16), 5);
		KUNIT_EXPECT_EQ(test, cmd.raw[18], KITE_GID_ROCE_V2_IPV4);
		KUNIT_EXPECT_EQ(test, cmd.raw[19], 1);
	}
}

/* A page buffer list descriptor as the device reads it at @raw. */
static void kite_test_pbl(struct kunit *test, const u8 *raw,
			  const struct kite_pbl_desc *want)
{
	KUNIT_EXPECT_EQ(test, get_unaligned_le64(raw), le64_to_cpu(want->addr));
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(raw + 8),
			le32_to_cpu(want->npages));
	KUNIT_EXPECT_EQ(test, raw[12], want->page_shift);
	KUNIT_EXPECT_EQ(test, raw[13], want->level);
}

static const struct kite_pbl_desc test_pbl = {
	.addr = cpu_to_le64(0x0123456789abc000ULL),
	.npages = cpu_to_le32(3),
	.page_shift = PAGE_SHIFT,
	.level = KITE_PBL_LEVEL_1,
};

static const struct kite_pbl_desc test_pbl2 = {
	.addr = cpu_to_le64(0x7000),
	.npages = cpu_to_le32(1),
	.page_shift = PAGE_SHIFT,
	.level = KITE_PBL_LEVEL_DIRECT,
};

static void kite_test_enc_create_cq(struct kunit *test)
{
	struct kite_aq_cmd cmd;

	memset(&cmd, 0xa5, sizeof(cmd));
	kite_enc_create_cq(&cmd, 9, &test_pbl, 10, 3, 0x123456789abcdef8ull);
	kite_test_hdr(test, &cmd, KITE_CMD_CREATE_CQ, 9);
	kite_test_pbl(test, cmd.raw, &test_pbl);
	KUNIT_EXPECT_EQ(test, cmd.raw[16], 10);		/* log_depth */
	KUNIT_EXPECT_EQ(test, get_unaligned_le16(cmd.raw + 18), 3); /* eqn */
	KUNIT_EXPECT_TRUE(test, !memchr_inv(cmd.raw + 20, 0, 4));
	/* the doorbell record */
	KUNIT_EXPECT_EQ(test, get_unaligned_le64(cmd.raw + 24),
			0x123456789abcdef8ull);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(cmd.raw + 32, 0,
					    sizeof(cmd.raw) - 32));
	KUNIT_EXPECT_PTR_EQ(test, kite_cmd_out_buf(&cmd), NULL);
	/* no record: the field stays zero, as an ABI 1.1 device expects */
	kite_enc_create_cq(&cmd, 9, &test_pbl, 10, 3, 0);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(cmd.raw + 20, 0,
					    sizeof(cmd.raw) - 20));
}

static void kite_test_enc_modify_cq(struct kunit *test)
{
	struct kite_aq_cmd cmd;

	memset(&cmd, 0xa5, sizeof(cmd));
	kite_enc_modify_cq(&cmd, 0, 0x00fedcba, &test_pbl2, 9);
	kite_test_hdr(test, &cmd, KITE_CMD_MODIFY_CQ, 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw), 0x00fedcba);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw + 4), 0);
	kite_test_pbl(test, cmd.raw + 8, &test_pbl2);
	KUNIT_EXPECT_EQ(test, cmd.raw[24], 9);		/* log_depth */
	KUNIT_EXPECT_TRUE(test, !memchr_inv(cmd.raw + 25, 0,
					    sizeof(cmd.raw) - 25));
}

static void kite_test_enc_query_obj(struct kunit *test)
{
	static const u8 ops[] = { KITE_CMD_QUERY_CQ, KITE_CMD_QUERY_QP,
				  KITE_CMD_QUERY_QP_STATS };
	struct kite_aq_cmd cmd;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		memset(&cmd, 0xa5, sizeof(cmd));
		kite_enc_query_obj(&cmd, ops[i], 4, 0x123456);
		kite_test_hdr(test, &cmd, ops[i], 4);
		KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw), 0x123456);
		/* the result descriptor at 8 is kite_admin_exec()'s */
		KUNIT_EXPECT_PTR_EQ(test, kite_cmd_out_buf(&cmd),
				    &cmd.query_obj.out);
		KUNIT_EXPECT_PTR_EQ(test, (u8 *)kite_cmd_out_buf(&cmd),
				    cmd.raw + 8);
		KUNIT_EXPECT_TRUE(test, !memchr_inv(cmd.raw + 4, 0,
						    sizeof(cmd.raw) - 4));
	}
}

static void kite_test_enc_create_qp(struct kunit *test)
{
	const struct kite_qp_create_params p = {
		.type = KITE_QPT_UD,
		.flags = KITE_QP_FLAG_SIG_ALL,
		.sq_log_depth = 7,
		.sq_log_stride = 8,
		.rq_log_depth = 6,
		.rq_log_stride = 5,
		.pdn = 0x11,
		.send_cqn = 0x22,
		.recv_cqn = 0x33,
		.sq = &test_pbl,
		.rq = &test_pbl2,
		.dbrec = 0xfedcba9876543210ull,
	};
	struct kite_aq_cmd cmd;

	memset(&cmd, 0xa5, sizeof(cmd));
	kite_enc_create_qp(&cmd, 2, &p);
	kite_test_hdr(test, &cmd, KITE_CMD_CREATE_QP, 2);
	KUNIT_EXPECT_EQ(test, cmd.raw[0], KITE_QPT_UD);
	KUNIT_EXPECT_EQ(test, cmd.raw[1], KITE_QP_FLAG_SIG_ALL);
	KUNIT_EXPECT_EQ(test, cmd.raw[2], 7);
	KUNIT_EXPECT_EQ(test, cmd.raw[3], 8);
	KUNIT_EXPECT_EQ(test, cmd.raw[4], 6);
	KUNIT_EXPECT_EQ(test, cmd.raw[5], 5);
	KUNIT_EXPECT_EQ(test, get_unaligned_le16(cmd.raw + 6), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw + 8), 0x11);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw + 12), 0x22);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw + 16), 0x33);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw + 20), 0);
	kite_test_pbl(test, cmd.raw + 24, &test_pbl);
	kite_test_pbl(test, cmd.raw + 40, &test_pbl2);
	KUNIT_EXPECT_EQ(test, get_unaligned_le64(cmd.raw + 56),
			0xfedcba9876543210ull);	/* the doorbell record */
	KUNIT_EXPECT_TRUE(test, !memchr_inv(cmd.raw + 64, 0,
					    sizeof(cmd.raw) - 64));
}

static void kite_test_enc_modify_qp(struct kunit *test)
{
	struct kite_qp_attr attr = {
		.attr_mask = cpu_to_le32(KITE_QP_ATTR_STATE |
					 KITE_QP_ATTR_AV |
					 KITE_QP_ATTR_DEST_QPN),
		.state = KITE_QPS_RTR,
		.cur_state = KITE_QPS_INIT,
		.dest_qpn = cpu_to_le32(0xabcdef),
		.av = {
			.dmac = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 },
			.hop_limit = 64,
		},
	};
	struct kite_aq_cmd cmd;

	memset(&cmd, 0xa5, sizeof(cmd));
	kite_enc_modify_qp(&cmd, 5, 0x000042, &attr);
	kite_test_hdr(test, &cmd, KITE_CMD_MODIFY_QP, 5);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw), 0x42);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw + 4), 0);
	/* struct kite_qp_attr from 8 on, as the caller encoded it */
	KUNIT_EXPECT_EQ(test, memcmp(cmd.raw + 8, &attr, sizeof(attr)), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw + 8),
			KITE_QP_ATTR_STATE | KITE_QP_ATTR_AV |
			KITE_QP_ATTR_DEST_QPN);
	KUNIT_EXPECT_EQ(test, cmd.raw[12], KITE_QPS_RTR);
	KUNIT_EXPECT_EQ(test, cmd.raw[13], KITE_QPS_INIT);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw + 40), 0xabcdef);
	KUNIT_EXPECT_EQ(test, memcmp(cmd.raw + 64, attr.av.dmac, ETH_ALEN), 0);
	KUNIT_EXPECT_EQ(test, cmd.raw[72], 64);		/* av.hop_limit */
	KUNIT_EXPECT_TRUE(test, !memchr_inv(cmd.raw + 8 + sizeof(attr), 0,
					    sizeof(cmd.raw) - 8 -
					    sizeof(attr)));
}

static void kite_test_enc_reg_mr(struct kunit *test)
{
	struct kite_mr_params p = {
		.pdn = 6,
		.access = KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_REMOTE_READ,
		.iova = 0x00007f0000001000ULL,
		.length = 0x200000,
		.pbl = &test_pbl,
		.key_variant = 0xab,
	};
	struct kite_aq_cmd cmd;

	memset(&cmd, 0xa5, sizeof(cmd));
	kite_enc_reg_mr(&cmd, 8, &p);
	kite_test_hdr(test, &cmd, KITE_CMD_REG_MR, 8);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw), 6);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw + 4),
			KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_REMOTE_READ);
	KUNIT_EXPECT_EQ(test, get_unaligned_le64(cmd.raw + 8),
			0x00007f0000001000ULL);
	KUNIT_EXPECT_EQ(test, get_unaligned_le64(cmd.raw + 16), 0x200000);
	kite_test_pbl(test, cmd.raw + 24, &test_pbl);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw + 40), 0xab);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(cmd.raw + 44, 0,
					    sizeof(cmd.raw) - 44));
	KUNIT_EXPECT_PTR_EQ(test, kite_cmd_out_buf(&cmd), NULL);

	/* The kernel's DMA MR: no pages, the DMA_ALL flag in the variant. */
	p.pbl = NULL;
	p.iova = 0;
	p.length = 0;
	p.key_variant = 0x01 | KITE_MR_DMA_ALL;
	kite_enc_reg_mr(&cmd, 0, &p);
	kite_test_hdr(test, &cmd, KITE_CMD_REG_MR, 0);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(cmd.raw + 8, 0, 32));
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw + 40),
			0x01 | KITE_MR_DMA_ALL);
}

static void kite_test_enc_alloc_mr(struct kunit *test)
{
	struct kite_aq_cmd cmd;

	memset(&cmd, 0xa5, sizeof(cmd));
	kite_enc_alloc_mr(&cmd, 6, 512, 0x3c);
	kite_test_hdr(test, &cmd, KITE_CMD_ALLOC_MR, 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw), 6);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw + 4), 512);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw + 8), 0x3c);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(cmd.raw + 12, 0,
					    sizeof(cmd.raw) - 12));
	KUNIT_EXPECT_PTR_EQ(test, kite_cmd_out_buf(&cmd), NULL);
}

static void kite_test_enc_rereg_mr(struct kunit *test)
{
	struct kite_rereg_params p = {
		.key = 0x1234ab,
		.flags = KITE_REREG_TRANS | KITE_REREG_PD | KITE_REREG_ACCESS,
		.pdn = 9,
		.access = KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_MW_BIND,
		.iova = 0x00007f0000002000ULL,
		.length = 0x3000,
		.pbl = &test_pbl,
		.key_variant = 0xac,
	};
	struct kite_aq_cmd cmd;

	memset(&cmd, 0xa5, sizeof(cmd));
	kite_enc_rereg_mr(&cmd, 8, &p);
	kite_test_hdr(test, &cmd, KITE_CMD_REREG_MR, 8);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw), 0x1234ab);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw + 4),
			KITE_REREG_TRANS | KITE_REREG_PD | KITE_REREG_ACCESS);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw + 8), 9);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw + 12),
			KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_MW_BIND);
	KUNIT_EXPECT_EQ(test, get_unaligned_le64(cmd.raw + 16),
			0x00007f0000002000ULL);
	KUNIT_EXPECT_EQ(test, get_unaligned_le64(cmd.raw + 24), 0x3000);
	kite_test_pbl(test, cmd.raw + 32, &test_pbl);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw + 48), 0xac);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(cmd.raw + 52, 0,
					    sizeof(cmd.raw) - 52));

	/* Parts not named stay zero, as the device requires. */
	p.flags = KITE_REREG_ACCESS;
	memset(&cmd, 0xa5, sizeof(cmd));
	kite_enc_rereg_mr(&cmd, 0, &p);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw + 4),
			KITE_REREG_ACCESS);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw + 8), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw + 12),
			KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_MW_BIND);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(cmd.raw + 16, 0, 32));
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw + 48), 0xac);
}

static void kite_test_enc_alloc_mw(struct kunit *test)
{
	struct kite_aq_cmd cmd;

	memset(&cmd, 0xa5, sizeof(cmd));
	kite_enc_alloc_mw(&cmd, 8, 6, KITE_MW_TYPE_2, 0x7e);
	kite_test_hdr(test, &cmd, KITE_CMD_ALLOC_MW, 8);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw), 6);
	KUNIT_EXPECT_EQ(test, cmd.raw[4], KITE_MW_TYPE_2);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(cmd.raw + 5, 0, 3));
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw + 8), 0x7e);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(cmd.raw + 12, 0,
					    sizeof(cmd.raw) - 12));

	/* DEALLOC_MW names the window by its key, as DEREG_MR names an MR. */
	kite_enc_destroy(&cmd, KITE_CMD_DEALLOC_MW, 8, 0x1234ab);
	kite_test_hdr(test, &cmd, KITE_CMD_DEALLOC_MW, 8);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(cmd.raw), 0x1234ab);
}

static void kite_test_out_buf(struct kunit *test)
{
	struct kite_aq_cmd cmd;

	kite_enc_hdr(&cmd, KITE_CMD_QUERY_QP, 0);
	KUNIT_EXPECT_PTR_EQ(test, kite_cmd_out_buf(&cmd), &cmd.query_obj.out);
	kite_enc_hdr(&cmd, KITE_CMD_QUERY_CQ, 0);
	KUNIT_EXPECT_PTR_EQ(test, kite_cmd_out_buf(&cmd), &cmd.query_obj.out);
	kite_enc_hdr(&cmd, KITE_CMD_CREATE_EQ, 0);
	KUNIT_EXPECT_PTR_EQ(test, kite_cmd_out_buf(&cmd), NULL);
}

/* Limits the ABI can express pass; one beyond any of them is named. */
static void kite_test_caps_invalid(struct kunit *test)
{
	static const struct kite_caps model = {
		.max_qp = 1u << 18, .max_cq = 1u << 18, .max_pd = 1u << 18,
		.max_mr = 1u << 20, .max_cqe = 1u << 22, .max_qp_wr = 1u << 15,
		.max_rd_atom = 128,
	};
	struct kite_caps c = model;

	KUNIT_EXPECT_NULL(test, kite_caps_invalid(&c));
	c.max_qp = KITE_DB_NUM_MASK;
	c.max_cq = KITE_DB_NUM_MASK;
	c.max_pd = KITE_DB_NUM_MASK;
	c.max_mr = U32_MAX >> KITE_KEY_VARIANT_BITS;
	c.max_cqe = 1u << 31;
	c.max_qp_wr = 1u << 31;
	c.max_rd_atom = U8_MAX;
	KUNIT_EXPECT_NULL(test, kite_caps_invalid(&c));
#define KITE_CAPS_BAD(field, val) do {					\
		c = model;						\
		c.field = (val);					\
		KUNIT_EXPECT_STREQ(test, kite_caps_invalid(&c), #field);	\
	} while (0)
	KITE_CAPS_BAD(max_qp, 0);
	KITE_CAPS_BAD(max_qp, KITE_DB_NUM_MASK + 1);
	KITE_CAPS_BAD(max_cq, KITE_DB_NUM_MASK + 1);
	KITE_CAPS_BAD(max_pd, 0);
	KITE_CAPS_BAD(max_mr, (U32_MAX >> KITE_KEY_VARIANT_BITS) + 1);
	KITE_CAPS_BAD(max_cqe, (1u << 31) + 1);
	KITE_CAPS_BAD(max_qp_wr, 0);
	KITE_CAPS_BAD(max_rd_atom, U8_MAX + 1);
#undef KITE_CAPS_BAD
}

static void kite_test_dec_device_attr(struct kunit *test)
{
	struct kite_device_attr attr = {
		.abi_version = cpu_to_le32(KITE_ABI_VERSION(KITE_ABI_MAJOR, 3)),
		.fw_version = cpu_to_le32(0x00010203),
		.sys_image_guid = cpu_to_le64(0x0102030405060708ULL),
		.page_size_cap = cpu_to_le64(0x40211000ULL),
		.max_mr_size = cpu_to_le64(0x10000000000ULL),
		.max_qp = cpu_to_le32(1), .max_cq = cpu_to_le32(2),
		.max_mr = cpu_to_le32(3), .max_pd = cpu_to_le32(4),
		.max_cqe = cpu_to_le32(5), .max_qp_wr = cpu_to_le32(6),
		.max_sge = cpu_to_le32(7), .max_inline = cpu_to_le32(8),
		.max_eq = cpu_to_le32(9), .max_uctx = cpu_to_le32(10),
		.max_gid = cpu_to_le32(11), .max_rd_atom = cpu_to_le32(12),
		.cap_flags = cpu_to_le32(KITE_DEV_CAP_RC | KITE_DEV_CAP_UD),
		.num_msix = cpu_to_le32(13),
		.vendor_id = cpu_to_le32(KITE_PCI_VENDOR_ID),
		.vendor_part_id = cpu_to_le32(KITE_PCI_DEVICE_ID),
		.hw_version = cpu_to_le32(KITE_PCI_REVISION),
		.max_mw = cpu_to_le32(14),
		.max_frwr_pages = cpu_to_le32(15),
		.max_sge_rd = cpu_to_le32(16),
	};
	struct kite_caps c;

	memset(&c, 0xff, sizeof(c));
	kite_dec_device_attr(&attr, &c);
	KUNIT_EXPECT_EQ(test, c.abi_version, KITE_ABI_VERSION(KITE_ABI_MAJOR, 3));
	KUNIT_EXPECT_EQ(test, c.fw_version, 0x00010203);
	KUNIT_EXPECT_EQ(test, c.sys_image_guid, 0x0102030405060708ULL);
	KUNIT_EXPECT_EQ(test, c.page_size_cap, 0x40211000ULL);
	KUNIT_EXPECT_EQ(test, c.max_mr_size, 0x10000000000ULL);
	KUNIT_EXPECT_EQ(test, c.max_qp, 1);
	KUNIT_EXPECT_EQ(test, c.max_cq, 2);
	KUNIT_EXPECT_EQ(test, c.max_mr, 3);
	KUNIT_EXPECT_EQ(test, c.max_pd, 4);
	KUNIT_EXPECT_EQ(test, c.max_cqe, 5);
	KUNIT_EXPECT_EQ(test, c.max_qp_wr, 6);
	KUNIT_EXPECT_EQ(test, c.max_sge, 7);
	KUNIT_EXPECT_EQ(test, c.max_inline, 8);
	KUNIT_EXPECT_EQ(test, c.max_eq, 9);
	KUNIT_EXPECT_EQ(test, c.max_uctx, 10);
	KUNIT_EXPECT_EQ(test, c.max_gid, 11);
	KUNIT_EXPECT_EQ(test, c.max_rd_atom, 12);
	KUNIT_EXPECT_EQ(test, c.cap_flags, KITE_DEV_CAP_RC | KITE_DEV_CAP_UD);
	KUNIT_EXPECT_EQ(test, c.num_msix, 13);
	KUNIT_EXPECT_EQ(test, c.vendor_id, KITE_PCI_VENDOR_ID);
	KUNIT_EXPECT_EQ(test, c.vendor_part_id, KITE_PCI_DEVICE_ID);
	KUNIT_EXPECT_EQ(test, c.hw_version, KITE_PCI_REVISION);
	KUNIT_EXPECT_EQ(test, c.max_mw, 14);
	KUNIT_EXPECT_EQ(test, c.max_frwr_pages, 15);
	KUNIT_EXPECT_EQ(test, c.max_sge_rd, 16);

	/* Before ABI 1.3 the words are reserved: not read. */
	attr.abi_version = cpu_to_le32(KITE_ABI_VERSION(KITE_ABI_MAJOR,
							KITE_ABI_MINOR_MEM_MGT - 1));
	memset(&c, 0xff, sizeof(c));
	kite_dec_device_attr(&attr, &c);
	KUNIT_EXPECT_EQ(test, c.max_sge, 7);
	KUNIT_EXPECT_EQ(test, c.max_mw, 0);
	KUNIT_EXPECT_EQ(test, c.max_frwr_pages, 0);
	KUNIT_EXPECT_EQ(test, c.max_sge_rd, 0);
}

static void kite_test_dec_port_attr(struct kunit *test)
{
	struct kite_port_attr attr = {
		.state = KITE_PORT_ACTIVE,
		.max_mtu = KITE_MTU_4096,
		.active_mtu = KITE_MTU_1024,
		.link_width = 1,
		.link_speed = 16,
		.mac = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 },
		.eth_mtu = cpu_to_le32(1500),
		.gid_tbl_len = cpu_to_le32(16),
	};
	struct kite_port_info p;

	kite_dec_port_attr(&attr, &p);
	KUNIT_EXPECT_EQ(test, p.state, KITE_PORT_ACTIVE);
	KUNIT_EXPECT_EQ(test, p.max_mtu, KITE_MTU_4096);
	KUNIT_EXPECT_EQ(test, p.active_mtu, KITE_MTU_1024);
	KUNIT_EXPECT_EQ(test, p.link_width, 1);
	KUNIT_EXPECT_EQ(test, p.link_speed, 16);
	KUNIT_EXPECT_TRUE(test, ether_addr_equal(p.mac, test_mac));
	KUNIT_EXPECT_EQ(test, p.eth_mtu, 1500);
	KUNIT_EXPECT_EQ(test, p.gid_tbl_len, 16);
}

static void kite_test_dec_stats(struct kunit *test)
{
	struct kite_stats st = {
		.num_uctx = cpu_to_le32(1), .num_pd = cpu_to_le32(2),
		.num_cq = cpu_to_le32(3), .num_qp = cpu_to_le32(4),
		.num_mr = cpu_to_le32(5), .num_eq = cpu_to_le32(6),
		.num_gid = cpu_to_le32(7),
		.eth_tx_packets = cpu_to_le64(0x100000001ULL),
		.eth_tx_bytes = cpu_to_le64(9), .eth_rx_packets = cpu_to_le64(10),
		.eth_rx_bytes = cpu_to_le64(11),
		.eth_rx_dropped = cpu_to_le64(12),
		.eth_tx_errors = cpu_to_le64(13),
		.roce_tx_packets = cpu_to_le64(14),
		.roce_rx_packets = cpu_to_le64(15),
		.roce_retransmits = cpu_to_le64(16),
		.roce_icrc_errors = cpu_to_le64(17),
		.eq_events_dropped = cpu_to_le64(18),
		.db_rejected = cpu_to_le64(0x200000019ULL),
		.roce_tx_bytes = cpu_to_le64(20),
		.roce_rx_bytes = cpu_to_le64(21),
		.roce_naks_sent = cpu_to_le64(22),
		.roce_naks_rcvd = cpu_to_le64(23),
		.roce_rnr_naks_sent = cpu_to_le64(24),
		.roce_rnr_naks_rcvd = cpu_to_le64(25),
		.roce_dup_requests = cpu_to_le64(26),
		.roce_rx_dropped = cpu_to_le64(27),
		.roce_timeouts = cpu_to_le64(28),
		.wire_dropped = cpu_to_le64(0x30000001dULL),
		.db_mmio = cpu_to_le64(0x40000001eULL),
		.db_rec_reads = cpu_to_le64(31),
	};
	struct kite_hw_stats s;

	kite_dec_stats(&st, &s);
	KUNIT_EXPECT_EQ(test, s.num_uctx, 1);
	KUNIT_EXPECT_EQ(test, s.num_pd, 2);
	KUNIT_EXPECT_EQ(test, s.num_cq, 3);
	KUNIT_EXPECT_EQ(test, s.num_qp, 4);
	KUNIT_EXPECT_EQ(test, s.num_mr, 5);
	KUNIT_EXPECT_EQ(test, s.num_eq, 6);
	KUNIT_EXPECT_EQ(test, s.num_gid, 7);
	KUNIT_EXPECT_EQ(test, s.eth_tx_packets, 0x100000001ULL);
	KUNIT_EXPECT_EQ(test, s.eth_tx_bytes, 9);
	KUNIT_EXPECT_EQ(test, s.eth_rx_packets, 10);
	KUNIT_EXPECT_EQ(test, s.eth_rx_bytes, 11);
	KUNIT_EXPECT_EQ(test, s.eth_rx_dropped, 12);
	KUNIT_EXPECT_EQ(test, s.eth_tx_errors, 13);
	KUNIT_EXPECT_EQ(test, s.roce_tx_packets, 14);
	KUNIT_EXPECT_EQ(test, s.roce_rx_packets, 15);
	KUNIT_EXPECT_EQ(test, s.roce_retransmits, 16);
	KUNIT_EXPECT_EQ(test, s.roce_icrc_errors, 17);
	KUNIT_EXPECT_EQ(test, s.eq_events_dropped, 18);
	KUNIT_EXPECT_EQ(test, s.db_rejected, 0x200000019ULL);
	KUNIT_EXPECT_EQ(test, s.roce_tx_bytes, 20);
	KUNIT_EXPECT_EQ(test, s.roce_rx_bytes, 21);
	KUNIT_EXPECT_EQ(test, s.roce_naks_sent, 22);
	KUNIT_EXPECT_EQ(test, s.roce_naks_rcvd, 23);
	KUNIT_EXPECT_EQ(test, s.roce_rnr_naks_sent, 24);
	KUNIT_EXPECT_EQ(test, s.roce_rnr_naks_rcvd, 25);
	KUNIT_EXPECT_EQ(test, s.roce_dup_requests, 26);
	KUNIT_EXPECT_EQ(test, s.roce_rx_dropped, 27);
	KUNIT_EXPECT_EQ(test, s.roce_timeouts, 28);
	KUNIT_EXPECT_EQ(test, s.wire_dropped, 0x30000001dULL);
	KUNIT_EXPECT_EQ(test, s.db_mmio, 0x40000001eULL);
	KUNIT_EXPECT_EQ(test, s.db_rec_reads, 31);
}

static void kite_test_dec_cq_info(struct kunit *test)
{
	struct kite_aq_cqe cqe = {};
	struct kite_cq_info info;
	u8 *raw = (u8 *)&cqe;

	/* out[] starts at byte 8 of the completion */
	put_unaligned_le32(9, raw + 8 + 4 * KITE_CQ_QUERY_LOG_DEPTH);
	put_unaligned_le32(2, raw + 8 + 4 * KITE_CQ_QUERY_EQN);
	put_unaligned_le32(KITE_CQ_FLAG_ARMED,
			   raw + 8 + 4 * KITE_CQ_QUERY_FLAGS);
	put_unaligned_le32(0xfffffffe, raw + 8 + 4 * KITE_CQ_QUERY_PI);
	kite_dec_cq_info(&cqe, &info);
	KUNIT_EXPECT_EQ(test, info.log_depth, 9);
	KUNIT_EXPECT_EQ(test, info.eqn, 2);
	KUNIT_EXPECT_EQ(test, info.flags, KITE_CQ_FLAG_ARMED);
	KUNIT_EXPECT_EQ(test, info.pi, 0xfffffffe);
}

#define KITE_TEST_AQ_LOG	2	/* 4 contexts, 4 completions */

/* A fake admin queue: contexts and a zeroed ACQ, no device. */
static struct kite_admin *kite_test_fake_admin(struct kunit *test)
{
	struct kite_admin *adm = kunit_kzalloc(test, sizeof(*adm), GFP_KERNEL);
	u32 depth = 1U << KITE_TEST_AQ_LOG;

	KUNIT_ASSERT_NOT_NULL(test, adm);
	adm->aq_log = KITE_TEST_AQ_LOG;
	adm->acq_log = KITE_TEST_AQ_LOG;
	adm->ctx = kunit_kcalloc(test, depth, sizeof(*adm->ctx), GFP_KERNEL);
	adm->acq = kunit_kcalloc(test, depth, sizeof(*adm->acq), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, adm->ctx);
	KUNIT_ASSERT_NOT_NULL(test, adm->acq);
	return adm;
}

/* The device writing completion number @index (free-running). */
static void kite_test_put_cqe(struct kite_admin *adm, u32 index, u16 cmd_id,
			      u8 status)
{
	struct kite_aq_cqe *cqe = &adm->acq[kite_ring_slot(index,
							   adm->acq_log)];

	memset(cqe, 0, sizeof(*cqe));
	cqe->cmd_id = cpu_to_le16(cmd_id);
	cqe->status = status;
	cqe->out[0] = cpu_to_le32(index);
	cqe->flags = kite_ring_phase(index, adm->acq_log);
}

/* A command posted in context @slot with generation @gen. */
static u16 kite_test_post(struct kite_admin *adm, u32 slot, u16 gen)
{
	struct kite_admin_ctx *ctx = &adm->ctx[slot];

	ctx->cmd_id = (gen << adm->aq_log) | slot;
	ctx->in_use = true;
	ctx->completed = false;
	return ctx->cmd_id;
}

static void kite_test_acq_take(struct kunit *test)
{
	struct kite_admin *adm = kite_test_fake_admin(test);
	u32 depth = 1U << KITE_TEST_AQ_LOG;
	struct kite_admin_ctx *ctx = NULL;
	u16 id, got = 0;
	u32 i;

	/* A zeroed ring holds nothing. */
	KUNIT_EXPECT_EQ(test, kite_acq_take(adm, &ctx, &got), KITE_ACQ_EMPTY);
	KUNIT_EXPECT_EQ(test, adm->acq_ci, 0);

	/* A completion for an outstanding command. */
	id = kite_test_post(adm, 1, 7);
	kite_test_put_cqe(adm, 0, id, KITE_STS_BUSY);
	KUNIT_EXPECT_EQ(test, kite_acq_take(adm, &ctx, &got), KITE_ACQ_MATCH);
	KUNIT_EXPECT_PTR_EQ(test, ctx, &adm->ctx[1]);
	KUNIT_EXPECT_EQ(test, got, id);
	KUNIT_EXPECT_TRUE(test, adm->ctx[1].completed);
	KUNIT_EXPECT_EQ(test, adm->ctx[1].cqe.status, KITE_STS_BUSY);
	KUNIT_EXPECT_EQ(test, adm->acq_ci, 1);

	/* The same completion again: consumed, matches nothing. */
	kite_test_put_cqe(adm, 1, id, KITE_STS_OK);
	KUNIT_EXPECT_EQ(test, kite_acq_take(adm, &ctx, &got),
			KITE_ACQ_UNKNOWN);
	KUNIT_EXPECT_EQ(test, adm->ctx[1].cqe.status, KITE_STS_BUSY);
	KUNIT_EXPECT_EQ(test, adm->acq_ci, 2);

	/* A stale completion: right slot, older generation. */
	id = kite_test_post(adm, 2, 9);
	kite_test_put_cqe(adm, 2, (8 << KITE_TEST_AQ_LOG) | 2, KITE_STS_OK);
	KUNIT_EXPECT_EQ(test, kite_acq_take(adm, &ctx, &got),
			KITE_ACQ_UNKNOWN);
	KUNIT_EXPECT_FALSE(test, adm->ctx[2].completed);

	/* An unknown cmd_id: its slot has no command. */
	kite_test_put_cqe(adm, 3, (9 << KITE_TEST_AQ_LOG) | 3, KITE_STS_OK);
	KUNIT_EXPECT_EQ(test, kite_acq_take(adm, &ctx, &got),
			KITE_ACQ_UNKNOWN);
	KUNIT_EXPECT_EQ(test, got, (9 << KITE_TEST_AQ_LOG) | 3);
	KUNIT_EXPECT_EQ(test, adm->acq_ci, 4);

	/* Phase wrap: slot 0 still holds the first pass's entry (phase 1);
	 * the second pass expects phase 0, so nothing is new yet.
	 */
	KUNIT_EXPECT_EQ(test, kite_acq_take(adm, &ctx, &got), KITE_ACQ_EMPTY);
	KUNIT_EXPECT_EQ(test, adm->acq_ci, 4);
	kite_test_put_cqe(adm, 4, id, KITE_STS_OK);
	KUNIT_EXPECT_EQ(test, kite_acq_take(adm, &ctx, &got), KITE_ACQ_MATCH);
	KUNIT_EXPECT_PTR_EQ(test, ctx, &adm->ctx[2]);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(ctx->cqe.out[0]), 4);
	KUNIT_EXPECT_EQ(test, kite_acq_take(adm, &ctx, &got), KITE_ACQ_EMPTY);

	/* Several more passes, one command at a time in rotating slots. */
	for (i = 5; i < 5 + 3 * depth; i++) {
		u32 slot = i % depth;

		id = kite_test_post(adm, slot, i);
		kite_test_put_cqe(adm, i, id, KITE_STS_OK);
		KUNIT_EXPECT_EQ(test, kite_acq_take(adm, &ctx, &got),
				KITE_ACQ_MATCH);
		KUNIT_EXPECT_PTR_EQ(test, ctx, &adm->ctx[slot]);
		KUNIT_EXPECT_EQ(test, le32_to_cpu(ctx->cqe.out[0]), i);
		adm->ctx[slot].in_use = false;
		KUNIT_EXPECT_EQ(test, kite_acq_take(adm, &ctx, &got),
				KITE_ACQ_EMPTY);
	}
	KUNIT_EXPECT_EQ(test, adm->acq_ci, 5 + 3 * depth);
}

static void kite_test_status_errno(struct kunit *test)
{
	static const struct {
		u8 status;
		int err;
		const char *name;
	} map[] = {
		{ KITE_STS_OK, 0, "OK" },
		{ KITE_STS_BAD_OPCODE, -EOPNOTSUPP, "BAD_OPCODE" },
		{ KITE_STS_BAD_PARAM, -EINVAL, "BAD_PARAM" },
		{ KITE_STS_NO_RESOURCES, -ENOMEM, "NO_RESOURCES" },
		{ KITE_STS_BAD_HANDLE, -ENOENT, "BAD_HANDLE" },
		{ KITE_STS_BUSY, -EBUSY, "BUSY" },
		{ KITE_STS_BAD_STATE, -EINVAL, "BAD_STATE" },
		{ KITE_STS_DMA_ERROR, -EIO, "DMA_ERROR" },
		{ KITE_STS_NOT_SUPPORTED, -EOPNOTSUPP, "NOT_SUPPORTED" },
		{ KITE_STS_PERMISSION, -EPERM, "PERMISSION" },
		{ KITE_STS_INTERNAL, -EIO, "INTERNAL" },
		{ KITE_STS_EXISTS, -EEXIST, "EXISTS" },
		{ KITE_STS_EXISTS + 1, -EIO, "UNKNOWN" },
		{ 0xff, -EIO, "UNKNOWN" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(map); i++) {
		KUNIT_EXPECT_EQ_MSG(test, kite_status_to_errno(map[i].status),
				    map[i].err, "status 0x%x", map[i].status);
		KUNIT_EXPECT_STREQ(test, kite_status_name(map[i].status),
				   map[i].name);
	}
}

/* Outcomes land in their own counter; only answered commands add latency. */
static void kite_test_admin_account(struct kunit *test)
{
	struct kite_admin_stats st = {};

	kite_admin_account(&st, KITE_CMD_CREATE_QP, KITE_STS_OK, 3000);
	kite_admin_account(&st, KITE_CMD_MODIFY_QP, KITE_STS_OK, 1000);
	KUNIT_EXPECT_EQ(test, st.posted, 2ULL);
	KUNIT_EXPECT_EQ(test, st.ok, 2ULL);
	KUNIT_EXPECT_EQ(test, st.failed, 0ULL);
	KUNIT_EXPECT_EQ(test, st.lat_sum_ns, 4000ULL);
	KUNIT_EXPECT_EQ(test, st.lat_max_ns, 3000ULL);

	kite_admin_account(&st, KITE_CMD_DESTROY_QP, KITE_STS_BUSY, 500);
	KUNIT_EXPECT_EQ(test, st.failed, 1ULL);
	KUNIT_EXPECT_EQ(test, st.last_fail_opcode, KITE_CMD_DESTROY_QP);
	KUNIT_EXPECT_EQ(test, st.last_fail_status, KITE_STS_BUSY);
	KUNIT_EXPECT_EQ(test, st.lat_sum_ns, 4500ULL);
	KUNIT_EXPECT_EQ(test, st.lat_max_ns, 3000ULL);

	/* A timeout: counted, but neither a failure nor a latency. */
	kite_admin_account(&st, KITE_CMD_QUERY_QP, KITE_ADMIN_NO_STATUS,
			   2000000000ULL);
	KUNIT_EXPECT_EQ(test, st.posted, 4ULL);
	KUNIT_EXPECT_EQ(test, st.timeouts, 1ULL);
	KUNIT_EXPECT_EQ(test, st.failed, 1ULL);
	KUNIT_EXPECT_EQ(test, st.last_fail_opcode, KITE_CMD_DESTROY_QP);
	KUNIT_EXPECT_EQ(test, st.lat_sum_ns, 4500ULL);
	KUNIT_EXPECT_EQ(test, st.lat_max_ns, 3000ULL);
	KUNIT_EXPECT_EQ(test, st.posted, st.ok + st.failed + st.timeouts);
}

static void kite_test_opcode_name(struct kunit *test)
{
	KUNIT_EXPECT_STREQ(test, kite_opcode_name(KITE_CMD_QUERY_DEVICE),
			   "QUERY_DEVICE");
	KUNIT_EXPECT_STREQ(test, kite_opcode_name(KITE_CMD_QUERY_STATS),
			   "QUERY_STATS");
	KUNIT_EXPECT_STREQ(test, kite_opcode_name(KITE_CMD_DEALLOC_PD),
			   "DEALLOC_PD");
	KUNIT_EXPECT_STREQ(test, kite_opcode_name(KITE_CMD_REREG_MR),
			   "REREG_MR");
	KUNIT_EXPECT_STREQ(test, kite_opcode_name(KITE_CMD_DEALLOC_MW),
			   "DEALLOC_MW");
	KUNIT_EXPECT_STREQ(test, kite_opcode_name(0x0a), "UNKNOWN");
	KUNIT_EXPECT_STREQ(test, kite_opcode_name(KITE_CMD_MAX), "UNKNOWN");
	KUNIT_EXPECT_STREQ(test, kite_opcode_name(0xff), "UNKNOWN");
}

static struct kunit_case kite_admin_cases[] = {
	KUNIT_CASE(kite_test_enc_query),
	KUNIT_CASE(kite_test_enc_set_port),
	KUNIT_CASE(kite_test_enc_create_eq),
	KUNIT_CASE(kite_test_enc_destroy),
	KUNIT_CASE(kite_test_enc_alloc),
	KUNIT_CASE(kite_test_enc_gid),
	KUNIT_CASE(kite_test_enc_create_cq),
	KUNIT_CASE(kite_test_enc_modify_cq),
	KUNIT_CASE(kite_test_enc_query_obj),
	KUNIT_CASE(kite_test_enc_create_qp),
	KUNIT_CASE(kite_test_enc_modify_qp),
	KUNIT_CASE(kite_test_enc_reg_mr),
	KUNIT_CASE(kite_test_enc_alloc_mr),
	KUNIT_CASE(kite_test_enc_rereg_mr),
	KUNIT_CASE(kite_test_enc_alloc_mw),
	KUNIT_CASE(kite_test_out_buf),
	KUNIT_CASE(kite_test_dec_device_attr),
	KUNIT_CASE(kite_test_caps_invalid),
	KUNIT_CASE(kite_test_dec_port_attr),
	KUNIT_CASE(kite_test_dec_stats),
	KUNIT_CASE(kite_test_dec_cq_info),
	KUNIT_CASE(kite_test_acq_take),
	KUNIT_CASE(kite_test_status_errno),
	KUNIT_CASE(kite_test_admin_account),
	KUNIT_CASE(kite_test_opcode_name),
	{}
};

static struct kunit_suite kite_admin_suite = {
	.name = "kite_admin",
	.test_cases = kite_admin_cases,
};

kunit_test_suite(kite_admin_suite);
