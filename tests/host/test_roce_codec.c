/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The RoCEv2 frame builder and the opcode rules of
 * qemu/roce/kite_roce_pkt.c: build/parse round trips of every opcode over
 * IPv4 and IPv6, the byte layout of every header (computed by hand and
 * with Python zlib), the opcode table, PSN wrap, segmentation at every
 * MTU and the UDP source port.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kite_roce_pkt.h"
#include "roce_frames.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- round trips ---- */

static void check_same(const struct kite_roce_pkt *in,
                       const struct kite_roce_pkt *out)
{
    uint32_t h = kite_roce_op_hdrs(in->opcode);

    assert_memory_equal(out->dmac, in->dmac, 6);
    assert_memory_equal(out->smac, in->smac, 6);
    assert_int_equal(out->ipv6, in->ipv6);
    assert_memory_equal(out->sgid, in->sgid, 16);
    assert_memory_equal(out->dgid, in->dgid, 16);
    assert_int_equal(out->traffic_class, in->traffic_class);
    assert_int_equal(out->hop_limit, in->hop_limit);
    assert_int_equal(out->flow_label, in->ipv6 ? in->flow_label : 0);
    assert_int_equal(out->ip_id, in->ipv6 ? 0 : in->ip_id);
    assert_int_equal(out->sport, in->sport);
    assert_int_equal(out->dport, KITE_ROCE_UDP_DPORT);
    assert_int_equal(out->opcode, in->opcode);
    assert_int_equal(out->se, in->se);
    assert_int_equal(out->mig, in->mig);
    assert_int_equal(out->ackreq, in->ackreq);
    assert_int_equal(out->tver, 0);
    assert_int_equal(out->pkey, in->pkey);
    assert_int_equal(out->fecn, in->fecn);
    assert_int_equal(out->becn, in->becn);
    assert_int_equal(out->dqpn, in->dqpn);
    assert_int_equal(out->psn, in->psn);
#define HDR_FIELD(bit, f) \
    assert_true(out->f == ((h & (bit)) ? in->f : 0))
    HDR_FIELD(KITE_HDR_RETH, reth_va);
    HDR_FIELD(KITE_HDR_RETH, reth_rkey);
    HDR_FIELD(KITE_HDR_RETH, reth_len);
    HDR_FIELD(KITE_HDR_AETH, aeth_syndrome);
    HDR_FIELD(KITE_HDR_AETH, aeth_msn);
    HDR_FIELD(KITE_HDR_ATOMIC_ETH, atomic_va);
    HDR_FIELD(KITE_HDR_ATOMIC_ETH, atomic_rkey);
    HDR_FIELD(KITE_HDR_ATOMIC_ETH, atomic_swap_add);
    HDR_FIELD(KITE_HDR_ATOMIC_ETH, atomic_compare);
    HDR_FIELD(KITE_HDR_ATOMIC_ACK_ETH, atomic_orig);
    HDR_FIELD(KITE_HDR_DETH, deth_qkey);
    HDR_FIELD(KITE_HDR_DETH, deth_sqpn);
    HDR_FIELD(KITE_HDR_IETH, ieth_rkey);
#undef HDR_FIELD
    if (h & KITE_HDR_IMMDT) {
        assert_memory_equal(out->imm, in->imm, 4);
    } else {
        static const uint8_t zero[4];

        assert_memory_equal(out->imm, zero, 4);
    }
    assert_int_equal(out->paylen, in->paylen);
    if (in->paylen) {
        assert_memory_equal(out->payload, in->payload, in->paylen);
    }
}

static void random_pkt(struct kite_roce_pkt *p, uint8_t op, bool ipv6,
                       const uint8_t *payload, uint32_t paylen)
{
    size_t i;

    memset(p, 0, sizeof(*p));
    for (i = 0; i < 6; i++) {
        p->dmac[i] = (uint8_t)pkt_rnd();
        p->smac[i] = (uint8_t)pkt_rnd();
    }
    p->ipv6 = ipv6;
    if (ipv6) {
        for (i = 0; i < 16; i++) {
            p->sgid[i] = (uint8_t)pkt_rnd();
            p->dgid[i] = (uint8_t)pkt_rnd();
        }
        p->flow_label = (uint32_t)pkt_rnd() & 0xfffff;
    } else {
        pkt_set_v4_gid(p->sgid, (uint8_t)pkt_rnd(), (uint8_t)pkt_rnd(),
                       (uint8_t)pkt_rnd(), (uint8_t)pkt_rnd());
        pkt_set_v4_gid(p->dgid, (uint8_t)pkt_rnd(), (uint8_t)pkt_rnd(),
                       (uint8_t)pkt_rnd(), (uint8_t)pkt_rnd());
        p->ip_id = (uint16_t)pkt_rnd();
    }
    p->traffic_class = (uint8_t)pkt_rnd();
    p->hop_limit = (uint8_t)pkt_rnd();
    p->sport = (uint16_t)pkt_rnd();
    p->opcode = op;
    p->se = pkt_rnd() & 1;
    p->mig = pkt_rnd() & 1;
    p->ackreq = pkt_rnd() & 1;
    p->pkey = (uint16_t)pkt_rnd();
    p->fecn = pkt_rnd() & 1;
    p->becn = pkt_rnd() & 1;
    p->dqpn = (uint32_t)pkt_rnd() & KITE_QPN_MASK;
    p->psn = (uint32_t)pkt_rnd() & KITE_PSN_MASK;
    p->reth_va = pkt_rnd();
    p->reth_rkey = (uint32_t)pkt_rnd();
    p->reth_len = (uint32_t)pkt_rnd();
    p->aeth_syndrome = (uint8_t)pkt_rnd();
    p->aeth_msn = (uint32_t)pkt_rnd() & KITE_PSN_MASK;
    p->atomic_va = pkt_rnd();
    p->atomic_rkey = (uint32_t)pkt_rnd();
    p->atomic_swap_add = pkt_rnd();
    p->atomic_compare = pkt_rnd();
    p->atomic_orig = pkt_rnd();
    for (i = 0; i < 4; i++) {
        p->imm[i] = (uint8_t)pkt_rnd();
    }
    p->deth_qkey = (uint32_t)pkt_rnd();
    p->deth_sqpn = (uint32_t)pkt_rnd() & KITE_QPN_MASK;
    p->ieth_rkey = (uint32_t)pkt_rnd();
    p->payload = payload;
    p->paylen = paylen;
}

static void round_trip(bool ipv6)
{
    static uint8_t payload[4096];
    static uint8_t f[KITE_ROCE_MAX_FRAME];
    static const uint32_t fixed_len[] = { 0, 1, 2, 3, 4, 5, 255, 256, 1023,
                                          4093, 4094, 4095, 4096 };
    unsigned op, it, nops = 0;
    size_t i;

    for (i = 0; i < sizeof(payload); i++) {
        payload[i] = (uint8_t)pkt_rnd();
    }
    for (op = 0; op < 256; op++) {
        uint32_t h = kite_roce_op_hdrs((uint8_t)op);

        if (!(h & KITE_OPF_VALID)) {
            continue;
        }
        nops++;
        for (it = 0; it < 64; it++) {
            struct kite_roce_pkt in, out;
            uint32_t len = 0, pad;
            size_t n, expect;

            if (h & KITE_OPF_PAYLOAD) {
                len = it < ARRAY_SIZE(fixed_len) ? fixed_len[it] :
                      (uint32_t)(pkt_rnd() % 4097);
            }
            random_pkt(&in, (uint8_t)op, ipv6,
                       payload + (len ? pkt_rnd() % (4097 - len) : 0), len);
            pad = (4 - len % 4) % 4;
            n = kite_roce_build(f, sizeof(f), &in);
            expect = ETH + (ipv6 ? 40 : 20) + 8 + 12 +
                     kite_roce_op_ext_len((uint8_t)op) + len + pad + 4;
            assert_int_equal(n, expect);
            /* PadCnt and zero pad bytes */
            assert_int_equal((f[ETH + (ipv6 ? 40 : 20) + 8 + 1] >> 4) & 3,
                             pad);
            for (i = 0; i < pad; i++) {
                assert_int_equal(f[n - 4 - pad + i], 0);
            }
            assert_int_equal(kite_roce_parse(f, n, &out), KITE_ROCE_OK);
            check_same(&in, &out);
            assert_true(out.payload >= f && out.payload + out.paylen <= f + n);
            assert_ptr_equal(out.l3, f + ETH);
            assert_int_equal(out.l3_len, ipv6 ? 40 : 20);
        }
    }
    /* RC 0x00-0x14, 0x16, 0x17; UC 0x20-0x2b; UD 0x64, 0x65 */
    assert_int_equal(nops, 21 + 2 + 12 + 2);
}

static void test_round_trip_ipv4(void **state)
{
    (void)state;
    round_trip(false);
}

static void test_round_trip_ipv6(void **state)
{
    (void)state;
    round_trip(true);
}

/* Out-of-range values are masked to their field width, never spill. */
static void test_build_masks_wide_values(void **state)
{
    uint8_t f[256];
    struct kite_roce_pkt p, q;

    (void)state;
    memset(f, 0, sizeof(f));
    pkt_base(&p, KITE_OP_ACK);
    p.aeth_syndrome = KITE_AETH_ACK_UNLIMITED;
    p.dqpn = 0xab123456;
    p.psn = 0xcd654321;
    p.aeth_msn = 0xef000001;
    pkt_build_ok(f, sizeof(f), &p);
    assert_int_equal(kite_roce_parse(f, sizeof(f), &q), KITE_ROCE_OK);
    assert_int_equal(q.dqpn, 0x123456);
    assert_int_equal(q.psn, 0x654321);
    assert_int_equal(q.aeth_msn, 1);
    assert_int_equal(f[ETH + 28 + 4], 0);           /* BTH byte 4 */
    assert_int_equal(f[ETH + 28 + 8], 0);           /* AckReq clear */
    assert_int_equal(f[ETH + 28 + 12], KITE_AETH_ACK_UNLIMITED);
}

static void test_build_rejects(void **state)
{
    uint8_t f[KITE_ROCE_MAX_FRAME];
    uint8_t data[8] = { 1 };
    struct kite_roce_pkt p;
    size_t n, cap;

    (void)state;
    /* cap one byte short fails, exact cap works */
    pkt_base(&p, KITE_OP_SEND_ONLY);
    p.payload = data;
    p.paylen = 5;
    n = pkt_build_ok(f, sizeof(f), &p);
    assert_int_equal(n, ETH + 20 + 8 + 12 + 8 + 4);
    for (cap = 0; cap < n; cap++) {
        assert_int_equal(kite_roce_build(f, cap, &p), 0);
    }
    assert_int_equal(kite_roce_build(f, n, &p), n);

    /* unknown opcodes */
    p.paylen = 0;
    p.opcode = 0x15;
    assert_int_equal(kite_roce_build(f, sizeof(f), &p), 0);
    p.opcode = 0x81;
    assert_int_equal(kite_roce_build(f, sizeof(f), &p), 0);
    p.opcode = KITE_BTH_UC | KITE_OP_READ_REQ;
    assert_int_equal(kite_roce_build(f, sizeof(f), &p), 0);

    /* payload on an opcode that carries none */
    p.opcode = KITE_OP_ACK;
    p.paylen = 4;
    assert_int_equal(kite_roce_build(f, sizeof(f), &p), 0);
    p.opcode = KITE_OP_READ_REQ;
    assert_int_equal(kite_roce_build(f, sizeof(f), &p), 0);
    /* the largest payload is the largest path MTU's */
    assert_int_equal(KITE_ROCE_MAX_PAYLOAD, kite_mtu_bytes(KITE_MTU_4096));
    /* the largest frame fits KITE_ROCE_MAX_FRAME */
    {
        static uint8_t big[KITE_ROCE_MAX_PAYLOAD];

        pkt_base(&p, KITE_OP_UD_SEND_ONLY_IMM);
        p.ipv6 = true;
        p.payload = big;
        p.paylen = 4093;
        assert_true(kite_roce_build(f, sizeof(f), &p) <= KITE_ROCE_MAX_FRAME);
        assert_true(kite_roce_build(f, sizeof(f), &p) > 0);
    }
}

/* A payload already in place in the frame is used as it is. */
static void test_build_payload_in_place(void **state)
{
    uint8_t f[KITE_ROCE_MAX_FRAME], g[KITE_ROCE_MAX_FRAME];
    static uint8_t data[4096];
    struct kite_roce_pkt p;
    size_t off, i, n;
    unsigned k;

    (void)state;
    for (i = 0; i < sizeof(data); i++) {
        data[i] = (uint8_t)pkt_rnd();
    }
    for (k = 0; k < 4; k++) {
        static const uint8_t ops[] = { KITE_OP_SEND_ONLY, KITE_OP_WRITE_ONLY,
                                       KITE_OP_READ_RESP_ONLY,
                                       KITE_OP_UD_SEND_ONLY_IMM };

        pkt_base(&p, ops[k]);
        p.ipv6 = k & 1;
        p.payload = data;
        p.paylen = 4093 - k;
        n = pkt_build_ok(g, sizeof(g), &p);
        off = kite_roce_payload_offset(&p);
        assert_int_equal(off, ETH + (p.ipv6 ? 40 : 20) + 8 + 12 +
                         kite_roce_op_ext_len(ops[k]));
        assert_memory_equal(g + off, data, p.paylen);
        memset(f, 0xee, sizeof(f));
        memcpy(f + off, data, p.paylen);
        p.payload = f + off;
        assert_int_equal(kite_roce_build(f, sizeof(f), &p), n);
        assert_memory_equal(f, g, n);
    }
}

/* ---- byte layout of each header ---- */

/* RC WRITE_ONLY_IMM over IPv4, every byte computed by hand / Python zlib. */
static const uint8_t layout_write_imm[86] = {
    0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
    0x08, 0x00, 0x45, 0x12, 0x00, 0x48, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11,
    0x9c, 0x37, 0xc6, 0x12, 0x00, 0x01, 0xc6, 0x12, 0x00, 0x02, 0xc1, 0x32,
    0x12, 0xb7, 0x00, 0x34, 0x00, 0x00, 0x0b, 0xb0, 0xff, 0xff, 0x00, 0x00,
    0x01, 0x02, 0x80, 0xab, 0xcd, 0xef, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55,
    0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0x00, 0x00, 0x00, 0x05, 0xde, 0xad,
    0xbe, 0xef, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x00, 0x00, 0x00, 0xb4, 0x77,
    0x94, 0x8a,
};

static void test_layout_eth_ip_udp_bth_reth_immdt(void **state)
{
    uint8_t f[256];
    struct kite_roce_pkt p;
    size_t n;

    (void)state;
    pkt_base(&p, KITE_OP_WRITE_ONLY_IMM);
    p.traffic_class = 0x12;
    p.ip_id = 0x1234;
    p.se = true;
    p.dqpn = 0x000102;
    p.ackreq = true;
    p.psn = 0xabcdef;
    p.reth_va = 0x0011223344556677ull;
    p.reth_rkey = 0x8899aabb;
    p.reth_len = 5;
    memcpy(p.imm, "\xde\xad\xbe\xef", 4);
    p.payload = (const uint8_t *)"hello";
    p.paylen = 5;
    n = kite_roce_build(f, sizeof(f), &p);
    assert_int_equal(n, sizeof(layout_write_imm));
    assert_memory_equal(f, layout_write_imm, n);
}

/* Extended headers start at Eth 14 + IPv4 20 + UDP 8 + BTH 12 = 54. */
static void test_layout_atomic_eth(void **state)
{
    static const uint8_t want[28] = {
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
        0x11, 0x22, 0x33, 0x44,
        0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8,
        0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8,
    };
    uint8_t f[256];
    struct kite_roce_pkt p;

    (void)state;
    pkt_base(&p, KITE_OP_CMP_SWP);
    p.atomic_va = 0x0102030405060708ull;
    p.atomic_rkey = 0x11223344;
    p.atomic_swap_add = 0xa1a2a3a4a5a6a7a8ull;
    p.atomic_compare = 0xb1b2b3b4b5b6b7b8ull;
    assert_int_equal(kite_roce_build(f, sizeof(f), &p), 54 + 28 + 4);
    assert_int_equal(f[42], KITE_OP_CMP_SWP);
    assert_int_equal(f[ETH + 20 + 4], 0);
    assert_int_equal(f[ETH + 20 + 5], 52);         /* UDP length */
    assert_memory_equal(f + 54, want, 28);
}

static void test_layout_aeth_atomic_ack(void **state)
{
    static const uint8_t want[12] = {
        0x1f, 0x34, 0x56, 0x78,
        0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8,
    };
    uint8_t f[256];
    struct kite_roce_pkt p;

    (void)state;
    pkt_base(&p, KITE_OP_ATOMIC_ACK);
    p.aeth_syndrome = 0x1f;
    p.aeth_msn = 0x345678;
    p.atomic_orig = 0xc1c2c3c4c5c6c7c8ull;
    assert_int_equal(kite_roce_build(f, sizeof(f), &p), 54 + 12 + 4);
    assert_memory_equal(f + 54, want, 12);
}

static void test_layout_deth_immdt(void **state)
{
    static const uint8_t want[12] = {
        0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
        0x11, 0x22, 0x33, 0x44,
    };
    uint8_t f[256];
    struct kite_roce_pkt p;

    (void)state;
    pkt_base(&p, KITE_OP_UD_SEND_ONLY_IMM);
    p.dqpn = 1;
    p.deth_qkey = KITE_GSI_QKEY;
    p.deth_sqpn = 1;
    memcpy(p.imm, "\x11\x22\x33\x44", 4);
    p.payload = (const uint8_t *)"\xaa";
    p.paylen = 1;
    assert_int_equal(kite_roce_build(f, sizeof(f), &p), 54 + 12 + 4 + 4);
    assert_int_equal(f[42], 0x65);
    assert_int_equal(f[43], 0x30);                 /* PadCnt 3 */
    assert_memory_equal(f + 54, want, 12);
    assert_int_equal(f[66], 0xaa);
    assert_int_equal(f[67] | f[68] | f[69], 0);
}

static void test_layout_ieth(void **state)
{
    static const uint8_t want[4] = { 0xca, 0xfe, 0xf0, 0x0d };
    uint8_t f[256];
    struct kite_roce_pkt p;

    (void)state;
    pkt_base(&p, KITE_OP_SEND_ONLY_INV);
    p.ieth_rkey = 0xcafef00d;
    p.payload = (const uint8_t *)"abcd";
    p.paylen = 4;
    assert_int_equal(kite_roce_build(f, sizeof(f), &p), 54 + 4 + 4 + 4);
    assert_memory_equal(f + 54, want, 4);
    assert_memory_equal(f + 58, "abcd", 4);
    assert_int_equal(f[43], 0x00);                 /* PadCnt 0 */
}

/* BTH flag bits: SE 1.7, M 1.6, FECN 4.7, BECN 4.6, AckReq 8.7. */
static void test_layout_bth_bits(void **state)
{
    uint8_t f[256];
    struct kite_roce_pkt p;

    (void)state;
    pkt_base(&p, KITE_OP_SEND_ONLY);
    p.mig = true;
    p.fecn = true;
    p.pkey = 0x7fff;
    assert_true(kite_roce_build(f, sizeof(f), &p) > 0);
    assert_int_equal(f[43], 0x40);
    assert_int_equal(f[44], 0x7f);
    assert_int_equal(f[45], 0xff);
    assert_int_equal(f[46], 0x80);
    assert_int_equal(f[50], 0x00);
    p.mig = false;
    p.fecn = false;
    p.becn = true;
    p.se = true;
    p.ackreq = true;
    assert_true(kite_roce_build(f, sizeof(f), &p) > 0);
    assert_int_equal(f[43], 0x80);
    assert_int_equal(f[46], 0x40);
    assert_int_equal(f[50], 0x80);
}

/* ---- opcode table ---- */

static void test_op_table(void **state)
{
    static const struct {
        uint8_t op;
        uint32_t hdrs;      /* KITE_HDR_* */
        uint32_t ext;
        bool payload, request, first, last;
    } t[] = {
        { 0x00, 0, 0, 1, 1, 1, 0 },
        { 0x01, 0, 0, 1, 1, 0, 0 },
        { 0x02, 0, 0, 1, 1, 0, 1 },
        { 0x03, KITE_HDR_IMMDT, 4, 1, 1, 0, 1 },
        { 0x04, 0, 0, 1, 1, 1, 1 },
        { 0x05, KITE_HDR_IMMDT, 4, 1, 1, 1, 1 },
        { 0x06, KITE_HDR_RETH, 16, 1, 1, 1, 0 },
        { 0x07, 0, 0, 1, 1, 0, 0 },
        { 0x08, 0, 0, 1, 1, 0, 1 },
        { 0x09, KITE_HDR_IMMDT, 4, 1, 1, 0, 1 },
        { 0x0a, KITE_HDR_RETH, 16, 1, 1, 1, 1 },
        { 0x0b, KITE_HDR_RETH | KITE_HDR_IMMDT, 20, 1, 1, 1, 1 },
        { 0x0c, KITE_HDR_RETH, 16, 0, 1, 1, 1 },
        { 0x0d, KITE_HDR_AETH, 4, 1, 0, 1, 0 },
        { 0x0e, 0, 0, 1, 0, 0, 0 },
        { 0x0f, KITE_HDR_AETH, 4, 1, 0, 0, 1 },
        { 0x10, KITE_HDR_AETH, 4, 1, 0, 1, 1 },
        { 0x11, KITE_HDR_AETH, 4, 0, 0, 1, 1 },
        { 0x12, KITE_HDR_AETH | KITE_HDR_ATOMIC_ACK_ETH, 12, 0, 0, 1, 1 },
        { 0x13, KITE_HDR_ATOMIC_ETH, 28, 0, 1, 1, 1 },
        { 0x14, KITE_HDR_ATOMIC_ETH, 28, 0, 1, 1, 1 },
        { 0x16, KITE_HDR_IETH, 4, 1, 1, 0, 1 },
        { 0x17, KITE_HDR_IETH, 4, 1, 1, 1, 1 },
        { 0x64, KITE_HDR_DETH, 8, 1, 1, 1, 1 },
        { 0x65, KITE_HDR_DETH | KITE_HDR_IMMDT, 12, 1, 1, 1, 1 },
    };
    static const uint8_t unknown[] = {
        0x15, 0x18, 0x1c, 0x1d, 0x1f, 0x2c, 0x2d, 0x30, 0x31, 0x33, 0x34,
        0x36, 0x37, 0x40, 0x44, 0x60, 0x61, 0x66, 0x80, 0x81, 0xa0, 0xe0,
        0xff,
    };
    const uint32_t hdr_mask = KITE_HDR_RETH | KITE_HDR_AETH |
        KITE_HDR_ATOMIC_ETH | KITE_HDR_ATOMIC_ACK_ETH | KITE_HDR_IMMDT |
        KITE_HDR_DETH | KITE_HDR_IETH;
    size_t i;

    (void)state;
    for (i = 0; i < ARRAY_SIZE(t); i++) {
        uint32_t h = kite_roce_op_hdrs(t[i].op);

        assert_true(h & KITE_OPF_VALID);
        assert_int_equal(h & hdr_mask, t[i].hdrs);
        assert_int_equal(kite_roce_op_ext_len(t[i].op), t[i].ext);
        assert_int_equal(!!(h & KITE_OPF_PAYLOAD), t[i].payload);
        assert_int_equal(!!(h & KITE_OPF_REQUEST), t[i].request);
        assert_int_equal(!!(h & KITE_OPF_FIRST), t[i].first);
        assert_int_equal(!!(h & KITE_OPF_LAST), t[i].last);
        /* UC repeats the RC SEND/WRITE rows */
        if (t[i].op <= 0x0b) {
            assert_int_equal(kite_roce_op_hdrs(0x20 | t[i].op), h);
            assert_int_equal(kite_roce_op_ext_len(0x20 | t[i].op), t[i].ext);
        }
    }
    for (i = 0; i < ARRAY_SIZE(unknown); i++) {
        assert_int_equal(kite_roce_op_hdrs(unknown[i]), 0);
        assert_int_equal(kite_roce_op_ext_len(unknown[i]), 0);
    }
}

/* ---- PSN ---- */

static void test_psn_add_wrap(void **state)
{
    (void)state;
    assert_int_equal(kite_psn_add(0, 1), 1);
    assert_int_equal(kite_psn_add(0xfffffe, 1), 0xffffff);
    assert_int_equal(kite_psn_add(0xffffff, 1), 0);
    assert_int_equal(kite_psn_add(0xfffff0, 0x20), 0x10);
    assert_int_equal(kite_psn_add(0x123456, 0x1000000), 0x123456);
    assert_int_equal(kite_psn_add(5, 0xffffff), 4);     /* i.e. minus 1 */
}

static void test_psn_cmp_wrap(void **state)
{
    (void)state;
    assert_int_equal(kite_psn_cmp(5, 5), 0);
    assert_int_equal(kite_psn_cmp(0xffffff, 0xffffff), 0);
    assert_true(kite_psn_cmp(6, 5) > 0);
    assert_true(kite_psn_cmp(5, 6) < 0);
    /* across the wrap: 0 comes after 0xffffff */
    assert_true(kite_psn_cmp(0, 0xffffff) > 0);
    assert_true(kite_psn_cmp(0xffffff, 0) < 0);
    assert_true(kite_psn_cmp(0x10, 0xfffff0) > 0);
    assert_true(kite_psn_cmp(0xfffff0, 0x10) < 0);
    /* the window is 2^23 either way */
    assert_true(kite_psn_cmp(0x7fffff, 0) > 0);
    assert_true(kite_psn_cmp(0x800001, 0) < 0);
    assert_true(kite_psn_cmp(kite_psn_add(0xabcdef, 0x7fffff), 0xabcdef) > 0);
    /* bits above 24 are ignored */
    assert_int_equal(kite_psn_cmp(0x01000005, 5), 0);
    assert_true(kite_psn_cmp(0xff000006, 5) > 0);
}

/* ---- segmentation ---- */

static void test_npkts_every_mtu(void **state)
{
    uint32_t mtu;

    (void)state;
    for (mtu = 256; mtu <= 4096; mtu <<= 1) {
        assert_int_equal(kite_roce_npkts(0, mtu), 1);
        assert_int_equal(kite_roce_npkts(1, mtu), 1);
        assert_int_equal(kite_roce_npkts(mtu - 1, mtu), 1);
        assert_int_equal(kite_roce_npkts(mtu, mtu), 1);
        assert_int_equal(kite_roce_npkts(mtu + 1, mtu), 2);
        assert_int_equal(kite_roce_npkts(2 * mtu, mtu), 2);
        assert_int_equal(kite_roce_npkts(2 * mtu + 1, mtu), 3);
        assert_int_equal(kite_roce_npkts(1u << 20, mtu), (1u << 20) / mtu);
        assert_int_equal(kite_roce_npkts((1u << 20) + 1, mtu),
                         (1u << 20) / mtu + 1);
        assert_int_equal(kite_roce_npkts(1ull << 31, mtu), (1ull << 31) / mtu);
    }
}

static void check_seq(uint8_t first_op, bool imm, uint32_t n,
                      uint8_t f, uint8_t m, uint8_t l, uint8_t o)
{
    uint32_t i;

    if (n == 1) {
        assert_int_equal(kite_roce_seg_opcode(first_op, imm, 0, 1), o);
        return;
    }
    assert_int_equal(kite_roce_seg_opcode(first_op, imm, 0, n), f);
    for (i = 1; i + 1 < n; i++) {
        assert_int_equal(kite_roce_seg_opcode(first_op, imm, i, n), m);
    }
    assert_int_equal(kite_roce_seg_opcode(first_op, imm, n - 1, n), l);
}

static void test_seg_opcode_every_mtu(void **state)
{
    static const uint64_t lens[] = { 0, 1, 255, 256, 257, 4095, 4096, 4097,
                                     65536, 1u << 20 };
    uint32_t mtu;
    size_t i;

    (void)state;
    for (mtu = 256; mtu <= 4096; mtu <<= 1) {
        for (i = 0; i < ARRAY_SIZE(lens); i++) {
            uint32_t n = kite_roce_npkts(lens[i], mtu);
            uint8_t t;

            for (t = 0; t <= KITE_BTH_UC; t += KITE_BTH_UC) {
                check_seq(t | KITE_OP_SEND_FIRST, false, n, t | 0x00,
                          t | 0x01, t | 0x02, t | 0x04);
                check_seq(t | KITE_OP_SEND_FIRST, true, n, t | 0x00,
                          t | 0x01, t | 0x03, t | 0x05);
                check_seq(t | KITE_OP_WRITE_FIRST, false, n, t | 0x06,
                          t | 0x07, t | 0x08, t | 0x0a);
                check_seq(t | KITE_OP_WRITE_FIRST, true, n, t | 0x06,
                          t | 0x07, t | 0x09, t | 0x0b);
            }
            /* RC only; imm ignored for read responses */
            check_seq(KITE_OP_READ_RESP_FIRST, false, n, 0x0d, 0x0e, 0x0f,
                      0x10);
            check_seq(KITE_OP_READ_RESP_FIRST, true, n, 0x0d, 0x0e, 0x0f,
                      0x10);
        }
    }
}

static void test_seg_opcode_edges(void **state)
{
    (void)state;
    /* two packets: FIRST then LAST, no MIDDLE */
    assert_int_equal(kite_roce_seg_opcode(KITE_OP_SEND_FIRST, false, 0, 2),
                     KITE_OP_SEND_FIRST);
    assert_int_equal(kite_roce_seg_opcode(KITE_OP_SEND_FIRST, false, 1, 2),
                     KITE_OP_SEND_LAST);
    /* any opcode of the kind names the kind */
    assert_int_equal(kite_roce_seg_opcode(KITE_OP_WRITE_ONLY, true, 0, 1),
                     KITE_OP_WRITE_ONLY_IMM);
    assert_int_equal(kite_roce_seg_opcode(KITE_OP_READ_RESP_ONLY, false, 1, 3),
                     KITE_OP_READ_RESP_MIDDLE);
    /* UD: ONLY only */
    assert_int_equal(kite_roce_seg_opcode(KITE_BTH_UD | KITE_OP_SEND_FIRST,
                                          false, 0, 1), 0x64);
    assert_int_equal(kite_roce_seg_opcode(KITE_BTH_UD | KITE_OP_SEND_FIRST,
                                          true, 0, 1), 0x65);
    assert_int_equal(kite_roce_seg_opcode(KITE_BTH_UD | KITE_OP_SEND_FIRST,
                                          false, 0, 2), KITE_ROCE_OP_INVALID);
    /* invalid: i >= n, UC read response, non-segmented kinds */
    assert_int_equal(kite_roce_seg_opcode(KITE_OP_SEND_FIRST, false, 2, 2),
                     KITE_ROCE_OP_INVALID);
    assert_int_equal(kite_roce_seg_opcode(KITE_OP_SEND_FIRST, false, 0, 0),
                     KITE_ROCE_OP_INVALID);
    assert_int_equal(kite_roce_seg_opcode(KITE_BTH_UC |
                                          KITE_OP_READ_RESP_FIRST,
                                          false, 0, 1), KITE_ROCE_OP_INVALID);
    assert_int_equal(kite_roce_seg_opcode(KITE_OP_READ_REQ, false, 0, 1),
                     KITE_ROCE_OP_INVALID);
    assert_int_equal(kite_roce_seg_opcode(KITE_OP_ACK, false, 0, 1),
                     KITE_ROCE_OP_INVALID);
    assert_int_equal(kite_roce_op_hdrs(KITE_ROCE_OP_INVALID), 0);
}

static void test_udp_sport(void **state)
{
    (void)state;
    assert_int_equal(kite_roce_udp_sport(17, 18, 0), 0xc132);
    /* non-zero flow label used as given: (fl & 0x3fff) ^ (fl >> 14) */
    assert_int_equal(kite_roce_udp_sport(17, 18, 0x12345),
                     0xc000 | (0x2345 ^ 0x4));
    assert_int_equal(kite_roce_udp_sport(1, 1, 0xfffff), 0xc000 | 0x3fc0);
    /*
     * Large QPNs: v = 0xffffff * 0xfffffe = 0xfffffd000002; v ^= v >> 20
     * gives 0xfffff2ffffd2; v ^= v >> 40 gives 0xfffff2ffff2d; fl = 0xfff2d;
     * 0x3f2d ^ 0x3f = 0x3f12.
     */
    assert_int_equal(kite_roce_udp_sport(0xffffff, 0xfffffe, 0), 0xff12);
    /* always in 0xc000..0xffff */
    assert_true(kite_roce_udp_sport(0, 0, 0) >= 0xc000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_ipv4),
        cmocka_unit_test(test_round_trip_ipv6),
        cmocka_unit_test(test_build_masks_wide_values),
        cmocka_unit_test(test_build_rejects),
        cmocka_unit_test(test_build_payload_in_place),
        cmocka_unit_test(test_layout_eth_ip_udp_bth_reth_immdt),
        cmocka_unit_test(test_layout_atomic_eth),
        cmocka_unit_test(test_layout_aeth_atomic_ack),
        cmocka_unit_test(test_layout_deth_immdt),
        cmocka_unit_test(test_layout_ieth),
        cmocka_unit_test(test_layout_bth_bits),
        cmocka_unit_test(test_op_table),
        cmocka_unit_test(test_psn_add_wrap),
        cmocka_unit_test(test_psn_cmp_wrap),
        cmocka_unit_test(test_npkts_every_mtu),
        cmocka_unit_test(test_seg_opcode_every_mtu),
        cmocka_unit_test(test_seg_opcode_edges),
        cmocka_unit_test(test_udp_sport),
    };

    return cmocka_run_group_tests_name("roce_codec", tests, NULL, NULL);
}
