// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Layout of every structure in include/kite/kite_hw.h.
 *
 * The expected offsets and sizes below are written as literal numbers,
 * derived by hand from the header under the ABI's rules (little-endian,
 * every field naturally aligned, no implicit padding). They deliberately do
 * not reuse the header's own static_asserts: a change to any structure makes
 * this test fail, so the change has to be made here too and shows up in
 * review as an ABI change.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <kite/kite_hw.h>

#include "layout.h"

/* Admin queue building blocks. */
LAYOUT_TEST(kite_pbl_desc, 16, 8,
	FLD(addr, 0, 8),
	FLD(npages, 8, 4),
	FLD(page_shift, 12, 1),
	FLD(level, 13, 1),
	FLD(reserved, 14, 2))

LAYOUT_TEST(kite_aq_hdr, 8, 4,
	FLD(opcode, 0, 1),
	FLD(flags, 1, 1),
	FLD(cmd_id, 2, 2),
	FLD(uctx, 4, 4))

LAYOUT_TEST(kite_aq_out_buf, 16, 8,
	FLD(addr, 0, 8),
	FLD(len, 8, 4),
	FLD(reserved, 12, 4))

/* Admin command payloads. */
LAYOUT_TEST(kite_cmd_query, 24, 8,
	FLD(out, 0, 16),
	FLD(out.addr, 0, 8),
	FLD(out.len, 8, 4),
	FLD(out.reserved, 12, 4),
	FLD(port, 16, 1),
	FLD(reserved, 17, 7))

LAYOUT_TEST(kite_cmd_set_port, 16, 4,
	FLD(mask, 0, 4),
	FLD(mtu, 4, 4),
	FLD(mac, 8, 6),
	FLD(port, 14, 1),
	FLD(reserved, 15, 1))

LAYOUT_TEST(kite_cmd_create_eq, 24, 8,
	FLD(ring, 0, 16),
	FLD(log_depth, 16, 1),
	FLD(reserved, 17, 1),
	FLD(msix_vector, 18, 2),
	FLD(reserved2, 20, 4))

LAYOUT_TEST(kite_cmd_destroy, 8, 4,
	FLD(handle, 0, 4),
	FLD(reserved, 4, 4))

LAYOUT_TEST(kite_cmd_alloc_uctx, 8, 4,
	FLD(reserved, 0, 8))

LAYOUT_TEST(kite_cmd_alloc_pd, 8, 4,
	FLD(reserved, 0, 8))

LAYOUT_TEST(kite_cmd_create_cq, 32, 8,
	FLD(ring, 0, 16),
	FLD(log_depth, 16, 1),
	FLD(reserved, 17, 1),
	FLD(eqn, 18, 2),
	FLD(reserved2, 20, 4),
	FLD(dbrec, 24, 8))

LAYOUT_TEST(kite_cmd_modify_cq, 32, 8,
	FLD(cqn, 0, 4),
	FLD(reserved, 4, 4),
	FLD(ring, 8, 16),
	FLD(ring.addr, 8, 8),
	FLD(ring.npages, 16, 4),
	FLD(ring.page_shift, 20, 1),
	FLD(ring.level, 21, 1),
	FLD(ring.reserved, 22, 2),
	FLD(log_depth, 24, 1),
	FLD(reserved2, 25, 7))

LAYOUT_TEST(kite_cmd_create_qp, 64, 8,
	FLD(qp_type, 0, 1),
	FLD(flags, 1, 1),
	FLD(sq_log_depth, 2, 1),
	FLD(sq_log_stride, 3, 1),
	FLD(rq_log_depth, 4, 1),
	FLD(rq_log_stride, 5, 1),
	FLD(reserved, 6, 2),
	FLD(pdn, 8, 4),
	FLD(send_cqn, 12, 4),
	FLD(recv_cqn, 16, 4),
	FLD(srqn, 20, 4),
	FLD(sq, 24, 16),
	FLD(rq, 40, 16),
	FLD(dbrec, 56, 8))

LAYOUT_TEST(kite_cmd_create_srq, 32, 8,
	FLD(pdn, 0, 4),
	FLD(log_depth, 4, 1),
	FLD(log_stride, 5, 1),
	FLD(reserved, 6, 2),
	FLD(limit, 8, 4),
	FLD(reserved2, 12, 4),
	FLD(ring, 16, 16),
	FLD(ring.addr, 16, 8),
	FLD(ring.npages, 24, 4))

LAYOUT_TEST(kite_cmd_modify_srq, 16, 4,
	FLD(srqn, 0, 4),
	FLD(attr_mask, 4, 4),
	FLD(limit, 8, 4),
	FLD(reserved, 12, 4))

LAYOUT_TEST(kite_cmd_mcast, 24, 4,
	FLD(gid, 0, 16),
	FLD(qpn, 16, 4),
	FLD(reserved, 20, 4))

LAYOUT_TEST(kite_av, 32, 4,
	FLD(dgid, 0, 16),
	FLD(dmac, 16, 6),
	FLD(sgid_index, 22, 1),
	FLD(net_type, 23, 1),
	FLD(hop_limit, 24, 1),
	FLD(traffic_class, 25, 1),
	FLD(sl, 26, 1),
	FLD(reserved, 27, 1),
	FLD(flow_label, 28, 4))

LAYOUT_TEST(kite_qp_attr, 72, 4,
	FLD(attr_mask, 0, 4),
	FLD(state, 4, 1),
	FLD(cur_state, 5, 1),
	FLD(path_mtu, 6, 1),
	FLD(timeout, 7, 1),
	FLD(retry_cnt, 8, 1),
	FLD(rnr_retry, 9, 1),
	FLD(min_rnr_timer, 10, 1),
	FLD(max_rd_atomic, 11, 1),
	FLD(max_dest_rd_atomic, 12, 1),
	FLD(port, 13, 1),
	FLD(pkey_index, 14, 2),
	FLD(access_flags, 16, 4),
	FLD(qkey, 20, 4),
	FLD(sq_psn, 24, 4),
	FLD(rq_psn, 28, 4),
	FLD(dest_qpn, 32, 4),
	FLD(reserved, 36, 4),
	FLD(av, 40, 32))

LAYOUT_TEST(kite_cmd_modify_qp, 80, 4,
	FLD(qpn, 0, 4),
	FLD(reserved, 4, 4),
	FLD(attr, 8, 72))

LAYOUT_TEST(kite_cmd_query_obj, 24, 8,
	FLD(handle, 0, 4),
	FLD(reserved, 4, 4),
	FLD(out, 8, 16))

LAYOUT_TEST(kite_cmd_reg_mr, 48, 8,
	FLD(pdn, 0, 4),
	FLD(access, 4, 4),
	FLD(iova, 8, 8),
	FLD(length, 16, 8),
	FLD(pbl, 24, 16),
	FLD(key_variant, 40, 4),
	FLD(reserved, 44, 4))

LAYOUT_TEST(kite_cmd_alloc_mr, 16, 4,
	FLD(pdn, 0, 4),
	FLD(max_pages, 4, 4),
	FLD(key_variant, 8, 4),
	FLD(reserved, 12, 4))

LAYOUT_TEST(kite_cmd_rereg_mr, 56, 8,
	FLD(key, 0, 4),
	FLD(flags, 4, 4),
	FLD(pdn, 8, 4),
	FLD(access, 12, 4),
	FLD(iova, 16, 8),
	FLD(length, 24, 8),
	FLD(pbl, 32, 16),
	FLD(key_variant, 48, 4),
	FLD(reserved, 52, 4))

LAYOUT_TEST(kite_cmd_alloc_mw, 16, 4,
	FLD(pdn, 0, 4),
	FLD(type, 4, 1),
	FLD(reserved, 5, 3),
	FLD(key_variant, 8, 4),
	FLD(reserved2, 12, 4))

LAYOUT_TEST(kite_cmd_gid, 24, 4,
	FLD(gid, 0, 16),
	FLD(index, 16, 2),
	FLD(type, 18, 1),
	FLD(port, 19, 1),
	FLD(reserved, 20, 4))

/* The command: a header and a union of payload views, all at byte 8. */
LAYOUT_TEST_X(kite_aq_cmd, 128, 8, false,
	FLD(hdr, 0, 8),
	FLD(hdr.opcode, 0, 1),
	FLD(hdr.flags, 1, 1),
	FLD(hdr.cmd_id, 2, 2),
	FLD(hdr.uctx, 4, 4),
	FLD(query, 8, 24),
	FLD(set_port, 8, 16),
	FLD(create_eq, 8, 24),
	FLD(destroy, 8, 8),
	FLD(alloc_uctx, 8, 8),
	FLD(alloc_pd, 8, 8),
	FLD(create_cq, 8, 32),
	FLD(modify_cq, 8, 32),
	FLD(create_srq, 8, 32),
	FLD(modify_srq, 8, 16),
	FLD(create_qp, 8, 64),
	FLD(modify_qp, 8, 80),
	FLD(query_obj, 8, 24),
	FLD(reg_mr, 8, 48),
	FLD(gid, 8, 24),
	FLD(raw, 8, 120),
	/* a few absolute positions of nested fields */
	FLD(create_qp.sq.addr, 32, 8),
	FLD(modify_qp.attr.av.dgid, 56, 16),
	FLD(modify_qp.attr.av.flow_label, 84, 4),
	FLD(reg_mr.key_variant, 48, 4))

LAYOUT_TEST(kite_aq_cqe, 32, 4,
	FLD(cmd_id, 0, 2),
	FLD(status, 2, 1),
	FLD(flags, 3, 1),
	FLD(syndrome, 4, 4),
	FLD(out, 8, 24),
	FLD(out[5], 28, 4))

/* Results written to kite_aq_out_buf. */
LAYOUT_TEST(kite_device_attr, 128, 8,
	FLD(abi_version, 0, 4),
	FLD(fw_version, 4, 4),
	FLD(sys_image_guid, 8, 8),
	FLD(page_size_cap, 16, 8),
	FLD(max_mr_size, 24, 8),
	FLD(max_qp, 32, 4),
	FLD(max_cq, 36, 4),
	FLD(max_mr, 40, 4),
	FLD(max_pd, 44, 4),
	FLD(max_cqe, 48, 4),
	FLD(max_qp_wr, 52, 4),
	FLD(max_sge, 56, 4),
	FLD(max_inline, 60, 4),
	FLD(max_eq, 64, 4),
	FLD(max_uctx, 68, 4),
	FLD(max_gid, 72, 4),
	FLD(max_rd_atom, 76, 4),
	FLD(cap_flags, 80, 4),
	FLD(num_msix, 84, 4),
	FLD(vendor_id, 88, 4),
	FLD(vendor_part_id, 92, 4),
	FLD(hw_version, 96, 4),
	FLD(max_mw, 100, 4),
	FLD(max_frwr_pages, 104, 4),
	FLD(max_sge_rd, 108, 4),
	FLD(max_srq, 112, 4),
	FLD(max_srq_wr, 116, 4),
	FLD(max_srq_sge, 120, 4),
	FLD(max_mcast_grp, 124, 2),
	FLD(max_mcast_qp, 126, 2))

LAYOUT_TEST(kite_port_attr, 36, 4,
	FLD(state, 0, 1),
	FLD(max_mtu, 1, 1),
	FLD(active_mtu, 2, 1),
	FLD(link_width, 3, 1),
	FLD(link_speed, 4, 1),
	FLD(mac, 5, 6),
	FLD(reserved, 11, 1),
	FLD(eth_mtu, 12, 4),
	FLD(gid_tbl_len, 16, 4),
	FLD(reserved2, 20, 16))

LAYOUT_TEST(kite_stats, 240, 8,
	FLD(num_uctx, 0, 4),
	FLD(num_pd, 4, 4),
	FLD(num_cq, 8, 4),
	FLD(num_qp, 12, 4),
	FLD(num_mr, 16, 4),
	FLD(num_eq, 20, 4),
	FLD(num_gid, 24, 4),
	FLD(num_srq, 28, 4),
	FLD(eth_tx_packets, 32, 8),
	FLD(eth_tx_bytes, 40, 8),
	FLD(eth_rx_packets, 48, 8),
	FLD(eth_rx_bytes, 56, 8),
	FLD(eth_rx_dropped, 64, 8),
	FLD(eth_tx_errors, 72, 8),
	FLD(roce_tx_packets, 80, 8),
	FLD(roce_rx_packets, 88, 8),
	FLD(roce_retransmits, 96, 8),
	FLD(roce_icrc_errors, 104, 8),
	FLD(eq_events_dropped, 112, 8),
	FLD(db_rejected, 120, 8),
	FLD(roce_tx_bytes, 128, 8),
	FLD(roce_rx_bytes, 136, 8),
	FLD(roce_naks_sent, 144, 8),
	FLD(roce_naks_rcvd, 152, 8),
	FLD(roce_rnr_naks_sent, 160, 8),
	FLD(roce_rnr_naks_rcvd, 168, 8),
	FLD(roce_dup_requests, 176, 8),
	FLD(roce_rx_dropped, 184, 8),
	FLD(roce_timeouts, 192, 8),
	FLD(wire_dropped, 200, 8),
	FLD(db_mmio, 208, 8),
	FLD(db_rec_reads, 216, 8),
	FLD(roce_mcast_rx, 224, 8),
	FLD(roce_mcast_dropped, 232, 8))

LAYOUT_TEST(kite_qp_stats, 128, 8,
	FLD(tx_packets, 0, 8),
	FLD(tx_bytes, 8, 8),
	FLD(rx_packets, 16, 8),
	FLD(rx_bytes, 24, 8),
	FLD(retransmits, 32, 8),
	FLD(timeouts, 40, 8),
	FLD(naks_sent, 48, 8),
	FLD(naks_rcvd, 56, 8),
	FLD(rnr_naks_sent, 64, 8),
	FLD(rnr_naks_rcvd, 72, 8),
	FLD(dup_requests, 80, 8),
	FLD(reserved, 88, 40))

/* Event queues and Ethernet rings. */
LAYOUT_TEST(kite_eqe, 16, 4,
	FLD(data, 0, 4),
	FLD(data2, 4, 4),
	FLD(reserved, 8, 4),
	FLD(reserved2, 12, 2),
	FLD(type, 14, 1),
	FLD(flags, 15, 1))

LAYOUT_TEST(kite_eth_desc, 16, 8,
	FLD(addr, 0, 8),
	FLD(len, 8, 2),
	FLD(reserved, 10, 2),
	FLD(reserved2, 12, 3),
	FLD(status, 15, 1))

/* RDMA queue formats. */
LAYOUT_TEST(kite_sq_wqe_hdr, 16, 4,
	FLD(opcode, 0, 1),
	FLD(flags, 1, 1),
	FLD(num_sge, 2, 1),
	FLD(reserved, 3, 1),
	FLD(inline_len, 4, 2),
	FLD(reserved2, 6, 2),
	FLD(imm_data, 8, 4),
	FLD(reserved3, 12, 4))

LAYOUT_TEST(kite_wqe_raddr, 16, 8,
	FLD(remote_addr, 0, 8),
	FLD(rkey, 8, 4),
	FLD(reserved, 12, 4))

LAYOUT_TEST(kite_wqe_atomic, 32, 8,
	FLD(remote_addr, 0, 8),
	FLD(rkey, 8, 4),
	FLD(reserved, 12, 4),
	FLD(swap_add, 16, 8),
	FLD(compare, 24, 8))

LAYOUT_TEST(kite_wqe_ud, 40, 4,
	FLD(av, 0, 32),
	FLD(remote_qpn, 32, 4),
	FLD(remote_qkey, 36, 4))

LAYOUT_TEST(kite_wqe_reg_mr, 40, 8,
	FLD(iova, 0, 8),
	FLD(length, 8, 8),
	FLD(pbl_addr, 16, 8),
	FLD(key, 24, 4),
	FLD(access, 28, 4),
	FLD(npages, 32, 4),
	FLD(page_shift, 36, 1),
	FLD(reserved, 37, 3))

LAYOUT_TEST(kite_wqe_bind_mw, 32, 8,
	FLD(addr, 0, 8),
	FLD(length, 8, 8),
	FLD(mw_key, 16, 4),
	FLD(mr_key, 20, 4),
	FLD(access, 24, 4),
	FLD(reserved, 28, 4))

LAYOUT_TEST(kite_sge, 16, 8,
	FLD(addr, 0, 8),
	FLD(length, 8, 4),
	FLD(lkey, 12, 4))

LAYOUT_TEST(kite_rq_wqe_hdr, 16, 2,
	FLD(num_sge, 0, 1),
	FLD(reserved, 1, 1),
	FLD(next, 2, 2),
	FLD(reserved2, 4, 12))

LAYOUT_TEST(kite_cqe, 32, 4,
	FLD(qpn, 0, 4),
	FLD(wqe_idx, 4, 2),
	FLD(opcode, 6, 1),
	FLD(status, 7, 1),
	FLD(byte_len, 8, 4),
	FLD(imm_data, 12, 4),
	FLD(src_qp, 16, 4),
	FLD(pkey_index, 20, 2),
	FLD(net_hdr, 22, 1),
	FLD(vendor_err, 23, 1),
	FLD(smac, 24, 6),
	FLD(reserved, 30, 1),
	FLD(flags, 31, 1))

LAYOUT_TEST(kite_qp_dbrec, 16, 4,
	FLD(sq_pi, 0, 4),
	FLD(rq_pi, 4, 4),
	FLD(sq_poll, 8, 4),
	FLD(rq_poll, 12, 4))

LAYOUT_TEST(kite_cq_dbrec, 8, 4,
	FLD(ci, 0, 4),
	FLD(reserved, 4, 4))

/* The sizes the header itself publishes as numbers. */
static void test_layout_published_sizes(void **state)
{
	(void)state;
	assert_int_equal(KITE_AQ_CMD_SIZE, 128);
	assert_int_equal(KITE_AQ_CQE_SIZE, 32);
	assert_int_equal(KITE_AQ_PAYLOAD_SIZE, 120);
	assert_int_equal(sizeof(struct kite_aq_cmd), KITE_AQ_CMD_SIZE);
	assert_int_equal(sizeof(struct kite_aq_cqe), KITE_AQ_CQE_SIZE);
	assert_int_equal(sizeof(((struct kite_aq_cmd *)0)->raw),
			 KITE_AQ_PAYLOAD_SIZE);
	/* Ring entries must divide a 4 KiB page so that no entry straddles one. */
	assert_int_equal(4096 % sizeof(struct kite_aq_cmd), 0);
	assert_int_equal(4096 % sizeof(struct kite_aq_cqe), 0);
	assert_int_equal(4096 % sizeof(struct kite_eqe), 0);
	assert_int_equal(4096 % sizeof(struct kite_eth_desc), 0);
	assert_int_equal(4096 % sizeof(struct kite_cqe), 0);
	/* Smallest SQ/RQ WQE stride holds its header and one segment. */
	assert_true(sizeof(struct kite_sq_wqe_hdr) + sizeof(struct kite_wqe_atomic) +
		    sizeof(struct kite_sge) <= 1u << KITE_SQ_MIN_LOG_STRIDE);
	assert_true(sizeof(struct kite_sq_wqe_hdr) + sizeof(struct kite_wqe_ud) <=
		    1u << KITE_SQ_MIN_LOG_STRIDE);
	assert_true(sizeof(struct kite_rq_wqe_hdr) <= 1u << KITE_RQ_MIN_LOG_STRIDE);
	/* Results that go to an out buffer are multiples of 4 bytes. */
	assert_int_equal(sizeof(struct kite_device_attr) % 4, 0);
	assert_int_equal(sizeof(struct kite_port_attr) % 4, 0);
	assert_int_equal(sizeof(struct kite_stats) % 8, 0);
}

/* Every structure with a layout test above. */
#define LAYOUT_LIST(X) \
	X(kite_pbl_desc)\
	X(kite_aq_hdr)\
	X(kite_aq_out_buf)\
	X(kite_cmd_query)\
	X(kite_cmd_set_port)\
	X(kite_cmd_create_eq)\
	X(kite_cmd_destroy)\
	X(kite_cmd_alloc_uctx)\
	X(kite_cmd_alloc_pd)\
	X(kite_cmd_create_cq)\
	X(kite_cmd_modify_cq)\
	X(kite_cmd_create_qp)\
	X(kite_cmd_create_srq)\
	X(kite_cmd_modify_srq)\
	X(kite_cmd_mcast)\
	X(kite_av)\
	X(kite_qp_attr)\
	X(kite_cmd_modify_qp)\
	X(kite_cmd_query_obj)\
	X(kite_cmd_reg_mr)\
	X(kite_cmd_alloc_mr)\
	X(kite_cmd_rereg_mr)\
	X(kite_cmd_alloc_mw)\
	X(kite_cmd_gid)\
	X(kite_aq_cmd)\
	X(kite_aq_cqe)\
	X(kite_device_attr)\
	X(kite_port_attr)\
	X(kite_stats)\
	X(kite_qp_stats)\
	X(kite_eqe)\
	X(kite_eth_desc)\
	X(kite_sq_wqe_hdr)\
	X(kite_wqe_raddr)\
	X(kite_wqe_atomic)\
	X(kite_wqe_ud)\
	X(kite_wqe_reg_mr)\
	X(kite_wqe_bind_mw)\
	X(kite_sge)\
	X(kite_rq_wqe_hdr)\
	X(kite_cqe)\
	X(kite_qp_dbrec)\
	X(kite_cq_dbrec)

/*
 * abi_structs.h lists every "struct kite_* {" defined in kite_hw.h (made by
 * the Makefile): a structure added to the ABI without a layout test fails.
 */
static void test_layout_every_struct_listed(void **state)
{
#define X(type) #type,
	static const char *const tested[] = { LAYOUT_LIST(X) };
#undef X
	static const char *const in_header[] = {
#include "abi_structs.h"
	};
	(void)state;
	check_all_listed("kite_hw.h", in_header, ARRAY_SIZE(in_header),
			 tested, ARRAY_SIZE(tested));
}

int main(void)
{
#define X(type) cmocka_unit_test(test_layout_##type),
	const struct CMUnitTest tests[] = {
		LAYOUT_LIST(X)
		cmocka_unit_test(test_layout_published_sizes),
		cmocka_unit_test(test_layout_every_struct_listed),
	};
#undef X

	return cmocka_run_group_tests_name("abi_layout", tests, NULL, NULL);
}
