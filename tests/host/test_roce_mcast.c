// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * UD multicast in the engine: a send to a group's GID leaves with the
 * group's Ethernet address and QP number 0xFFFFFF; a received datagram
 * for a group goes to every attached QP, each taking its own receive
 * (a QP without one, or with another Q_Key, drops only its copy, counted);
 * detach and QP destruction take QPs out; the attach and detach errors
 * and the table's limits.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <stdarg.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kite_roce_int.h"
#include "roce_fixture.h"

#define MC_QKEY         0x1234
#define MC_LEN          700
#define MC_RQ_OFF       0x100000        /* B's receive buffers */
#define MC_RQ_STRIDE    0x1000
#define MC_MAX_FRAME    2048

/* The last frame a node sent (the sim's link drops multicast frames). */
typedef struct McTap {
    uint8_t frame[MC_MAX_FRAME];
    size_t len;
    unsigned count;
} McTap;

static void mc_tap(Sim *s, int src, const uint8_t *frame, size_t len,
                   void *arg)
{
    McTap *t = arg;

    (void)s;
    (void)src;
    assert_true(len <= sizeof(t->frame));
    memcpy(t->frame, frame, len);
    t->len = len;
    t->count++;
}

static const uint8_t mc_gid4[16] = {
    [10] = 0xff, [11] = 0xff, 239, 0x81, 0x02, 0x03
};
static const uint8_t mc_gid6[16] = {
    0xff, 0x0e, [12] = 0x01, 0x02, 0x03, 0x04
};
static const uint8_t node_gid6[2][16] = {
    { 0xfd, 0x00, [15] = 1 },
    { 0xfd, 0x00, [15] = 2 },
};

/* Receive @slot of B's QP index @q: one buffer of MC_RQ_STRIDE bytes. */
static void mc_recv(SimNode *b, uint32_t qpn, unsigned q, unsigned slot,
                    uint32_t key)
{
    fx_recv(b, qpn, MC_RQ_OFF + (q * 4 + slot) * MC_RQ_STRIDE, MC_RQ_STRIDE,
            key);
}

/* A receive completion of @qpn with the datagram: GRH area, then data. */
static void mc_expect_recv(SimNode *a, SimNode *b, uint32_t cq, uint32_t qpn,
                           unsigned q, unsigned slot, bool v6)
{
    struct kite_cqe c;

    assert_true(sim_poll_cq(b, cq, &c));
    assert_int_equal(kr_le32(&c.qpn), qpn);
    assert_int_equal(c.status, KITE_CQE_SUCCESS);
    assert_int_equal(c.opcode, KITE_CQE_RECV);
    assert_int_equal(kr_le16(&c.wqe_idx), slot);
    assert_int_equal(kr_le32(&c.byte_len), KITE_UD_GRH_LEN + MC_LEN);
    assert_int_equal(c.net_hdr, v6 ? KITE_CQE_NET_IPV6 : KITE_CQE_NET_IPV4);
    assert_memory_equal(c.smac, a->mac, 6);
    assert_memory_equal(sim_mem(b, MC_RQ_OFF + (q * 4 + slot) *
                                MC_RQ_STRIDE + KITE_UD_GRH_LEN),
                        sim_mem(a, 0), MC_LEN);
}

/* A delivers the captured frame to B; whether B's engine took it. */
static bool mc_deliver(Sim *s, const McTap *t)
{
    return kite_roce_rx(s->node[1].e, t->frame, t->len);
}

static void mc_fanout(bool v6)
{
    const uint8_t *gid = v6 ? mc_gid6 : mc_gid4;
    Sim *s = calloc(1, sizeof(*s));
    const struct kite_roce_counters *bc;
    struct kite_roce_frame_info fi;
    uint32_t acq, bcq, aqp, akey, bkey, bqp[4];
    uint8_t mac[6];
    McTap tap = { .len = 0 };
    SimNode *a, *b;
    SimWr w;
    unsigned i;

    assert_non_null(s);
    sim_init(s, 2, MEM_SIZE, 21);
    a = &s->node[0];
    b = &s->node[1];
    if (v6) {
        memcpy(a->gid, node_gid6[0], 16);
        memcpy(b->gid, node_gid6[1], 16);
    }
    bc = kite_roce_counters(b->e);
    acq = sim_create_cq(a, 6);
    bcq = sim_create_cq(b, 6);
    aqp = sim_create_qp(a, KITE_QPT_UD, PDN, acq, acq, 4, 9, 4, 6, false);
    akey = sim_reg_mr(a, PDN, IOVA, MEM_SIZE, ALL_ACCESS, 0);
    bkey = sim_reg_mr(b, PDN, IOVA, MEM_SIZE, ALL_ACCESS, 0);
    sim_ud_up(a, aqp, MC_QKEY);
    /* B: QPs 0-2 attached (2 with another Q_Key), 3 not attached. */
    for (i = 0; i < 4; i++) {
        bqp[i] = sim_create_qp(b, KITE_QPT_UD, PDN, bcq, bcq, 4, 9, 4, 6,
                               false);
        sim_ud_up(b, bqp[i], i == 2 ? MC_QKEY + 1 : MC_QKEY);
        if (i < 3) {
            assert_int_equal(kite_roce_mcast_attach(sim_qp(b, bqp[i])->qp,
                                                    gid), KITE_STS_OK);
        }
    }
    assert_int_equal(kite_roce_mcast_groups(b->e), 1);
    kite_gid_mcast_mac(gid, mac);
    assert_true(kite_roce_mcast_mac(b->e, mac));
    assert_false(kite_roce_mcast_mac(a->e, mac));

    /* A sends to the group; its AV's MAC is wrong on purpose. */
    s->tap = mc_tap;
    s->tap_arg = &tap;
    fx_fill(sim_mem(a, 0), MC_LEN, 5);
    w = fx_wr(KITE_WQE_SEND, 0);
    fx_sge(&w, 0, MC_LEN, akey);
    sim_ud_av(s, 1, &w.av, 0);
    memcpy(w.av.dgid, gid, 16);
    w.av.net_type = v6 ? KITE_NET_IPV6 : KITE_NET_IPV4;
    w.remote_qpn = KITE_MCAST_QPN;
    w.remote_qkey = MC_QKEY;
    sim_post_send(a, aqp, &w);
    sim_run(s, RUN_STEPS);
    fx_expect_cqe(a, acq, aqp, 0, KITE_CQE_SEND, KITE_CQE_SUCCESS, MC_LEN);
    assert_int_equal(tap.count, 1);
    assert_memory_equal(tap.frame, mac, 6);
    assert_true(kite_roce_frame_peek(tap.frame, tap.len, &fi));
    assert_int_equal(fi.dqpn, KITE_MCAST_QPN);
    assert_memory_equal(fi.dgid, gid, 16);

    /* 1: QP 0 receives; 1 has no receive, 2 the wrong Q_Key, 3 is out. */
    mc_recv(b, bqp[0], 0, 0, bkey);
    mc_recv(b, bqp[2], 2, 0, bkey);
    mc_recv(b, bqp[3], 3, 0, bkey);
    assert_true(mc_deliver(s, &tap));
    sim_run(s, RUN_STEPS);
    mc_expect_recv(a, b, bcq, bqp[0], 0, 0, v6);
    fx_expect_no_cqe(b, bcq);
    assert_int_equal(bc->mcast_rx, 1);
    assert_int_equal(bc->mcast_dropped, 2);

    /* 2: now QP 1 has a receive and QP 0 none. */
    mc_recv(b, bqp[1], 1, 0, bkey);
    assert_true(mc_deliver(s, &tap));
    sim_run(s, RUN_STEPS);
    mc_expect_recv(a, b, bcq, bqp[1], 1, 0, v6);
    fx_expect_no_cqe(b, bcq);
    assert_int_equal(bc->mcast_rx, 2);
    assert_int_equal(bc->mcast_dropped, 4);

    /* 3: both have one; QP 1 detached gets nothing. */
    mc_recv(b, bqp[0], 0, 1, bkey);
    mc_recv(b, bqp[1], 1, 1, bkey);
    assert_int_equal(kite_roce_mcast_detach(sim_qp(b, bqp[1])->qp, gid),
                     KITE_STS_OK);
    assert_true(mc_deliver(s, &tap));
    sim_run(s, RUN_STEPS);
    mc_expect_recv(a, b, bcq, bqp[0], 0, 1, v6);
    fx_expect_no_cqe(b, bcq);
    assert_int_equal(bc->mcast_rx, 3);

    /* 4: a datagram to the group's GID but to QP 0's number instead. */
    {
        McTap other = { .len = 0 };
        uint64_t dropped = bc->rx_dropped;

        s->tap_arg = &other;
        w.remote_qpn = bqp[0];
        sim_post_send(a, aqp, &w);
        sim_run(s, RUN_STEPS);
        fx_expect_cqe(a, acq, aqp, 1, KITE_CQE_SEND, KITE_CQE_SUCCESS,
                      MC_LEN);
        assert_int_equal(other.count, 1);
        mc_recv(b, bqp[0], 0, 2, bkey);
        assert_true(mc_deliver(s, &other));
        sim_run(s, RUN_STEPS);
        fx_expect_no_cqe(b, bcq);
        assert_int_equal(bc->rx_dropped, dropped + 1);
        assert_int_equal(bc->mcast_rx, 3);
    }

    /* 5: destroying the last members ends the group: not the engine's. */
    sim_destroy_qp(b, bqp[0]);
    assert_int_equal(kite_roce_mcast_groups(b->e), 1);
    sim_destroy_qp(b, bqp[2]);
    assert_int_equal(kite_roce_mcast_groups(b->e), 0);
    assert_false(kite_roce_mcast_mac(b->e, mac));
    assert_false(mc_deliver(s, &tap));
    sim_free(s);
    free(s);
}

static void test_mcast_fanout_v4(void **st)
{
    (void)st;
    mc_fanout(false);
}

static void test_mcast_fanout_v6(void **st)
{
    (void)st;
    mc_fanout(true);
}

/* A UD QP of engine @e numbered @qpn, outside any harness. */
static KiteRoceQp *mc_qp(KiteRoce *e, uint32_t qpn, uint8_t type)
{
    struct kite_roce_qp_cfg cfg = {
        .qpn = qpn, .type = type, .pdn = PDN, .send_cqn = 1, .recv_cqn = 1,
        .sq_log_depth = 2, .sq_log_stride = 6,
        .rq_log_depth = 2, .rq_log_stride = 5,
    };
    KiteRoceQp *qp = kite_roce_qp_create(e, &cfg);

    assert_non_null(qp);
    return qp;
}

/*
 * Errors: a QP that is not UD, a GID that is not multicast, a second
 * attach, a detach of a non-member; a full group and a full table.
 */
static void test_mcast_limits(void **st)
{
    Sim *s = calloc(1, sizeof(*s));
    KiteRoceQp *ud, *other, *rc, *gsi, *qp[KITE_DEF_MAX_MCAST_QP];
    uint8_t gid[16], uni[16] = { [10] = 0xff, [11] = 0xff, 223, 1, 2, 3 };
    KiteRoce *e;
    unsigned i;

    (void)st;
    assert_non_null(s);
    sim_init(s, 1, MEM_SIZE, 3);
    e = s->node[0].e;
    ud = mc_qp(e, 0x1000, KITE_QPT_UD);
    other = mc_qp(e, 0x1001, KITE_QPT_UD);
    rc = mc_qp(e, 0x1002, KITE_QPT_RC);
    gsi = mc_qp(e, KITE_GSI_QPN, KITE_QPT_GSI);

    assert_int_equal(kite_roce_mcast_attach(rc, mc_gid4), KITE_STS_BAD_PARAM);
    assert_int_equal(kite_roce_mcast_attach(gsi, mc_gid4),
                     KITE_STS_BAD_PARAM);
    assert_int_equal(kite_roce_mcast_attach(ud, uni), KITE_STS_BAD_PARAM);
    assert_int_equal(kite_roce_mcast_attach(ud, mc_gid4), KITE_STS_OK);
    assert_int_equal(kite_roce_mcast_attach(ud, mc_gid4), KITE_STS_EXISTS);
    assert_int_equal(kite_roce_mcast_detach(other, mc_gid4),
                     KITE_STS_BAD_PARAM);
    assert_int_equal(kite_roce_mcast_detach(ud, mc_gid6), KITE_STS_BAD_PARAM);
    assert_int_equal(kite_roce_mcast_attach(ud, mc_gid6), KITE_STS_OK);
    assert_int_equal(kite_roce_mcast_groups(e), 2);
    assert_int_equal(kite_roce_mcast_detach(ud, mc_gid4), KITE_STS_OK);
    assert_int_equal(kite_roce_mcast_detach(ud, mc_gid4), KITE_STS_BAD_PARAM);
    assert_int_equal(kite_roce_mcast_groups(e), 1);

    /* A full group: KITE_DEF_MAX_MCAST_QP members, then no more. */
    for (i = 0; i < KITE_DEF_MAX_MCAST_QP; i++) {
        qp[i] = mc_qp(e, 0x2000 + i, KITE_QPT_UD);
        assert_int_equal(kite_roce_mcast_attach(qp[i], mc_gid4), KITE_STS_OK);
    }
    assert_int_equal(kite_roce_mcast_attach(other, mc_gid4),
                     KITE_STS_NO_RESOURCES);
    kite_roce_qp_destroy(qp[3]);
    assert_int_equal(kite_roce_mcast_attach(other, mc_gid4), KITE_STS_OK);

    /* A full table: KITE_DEF_MAX_MCAST_GRP groups, then no more. */
    memcpy(gid, mc_gid6, sizeof(gid));
    for (i = kite_roce_mcast_groups(e); i < KITE_DEF_MAX_MCAST_GRP; i++) {
        gid[1] = (uint8_t)(i + 0x10);
        assert_int_equal(kite_roce_mcast_attach(ud, gid), KITE_STS_OK);
    }
    assert_int_equal(kite_roce_mcast_groups(e), KITE_DEF_MAX_MCAST_GRP);
    gid[1] = 0x0f;
    assert_int_equal(kite_roce_mcast_attach(ud, gid), KITE_STS_NO_RESOURCES);
    /* Destroying a QP in most groups frees every group it alone was in. */
    kite_roce_qp_destroy(ud);
    assert_int_equal(kite_roce_mcast_groups(e), 1);
    assert_int_equal(kite_roce_mcast_attach(other, gid), KITE_STS_OK);
    for (i = 0; i < KITE_DEF_MAX_MCAST_QP; i++) {
        if (i != 3) {
            kite_roce_qp_destroy(qp[i]);
        }
    }
    kite_roce_qp_destroy(other);
    assert_int_equal(kite_roce_mcast_groups(e), 0);
    kite_roce_qp_destroy(rc);
    kite_roce_qp_destroy(gsi);
    sim_free(s);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mcast_fanout_v4),
        cmocka_unit_test(test_mcast_fanout_v6),
        cmocka_unit_test(test_mcast_limits),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
