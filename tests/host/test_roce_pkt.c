/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The RoCEv2 frame codec, qemu/roce/kite_roce_pkt.c: ICRC against the
 * vectors of roce-facts §4.4, build/parse round trips of every opcode over
 * IPv4 and IPv6, byte layout of every header, PSN wrap, segmentation at
 * every MTU, and the parser's rejection rules. Expected bytes come from
 * the vectors or were computed independently (Python zlib), never by
 * calling the codec a second time.
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
#include <time.h>
#include <cmocka.h>

#include "kite_roce_pkt.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define ETH 14

/* ---- test vectors (roce-facts §4.4) ---- */

/* A: ConnectX-4 Lx CNP capture, whole Ethernet frame. */
static const uint8_t vec_a[74] = {
    0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2, 0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32,
    0x08, 0x00, 0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11,
    0x91, 0x61, 0x0a, 0x00, 0x11, 0x01, 0x0a, 0x00, 0x12, 0x01, 0x00, 0x00,
    0x12, 0xb7, 0x00, 0x28, 0x00, 0x00, 0x81, 0x00, 0xff, 0xff, 0x40, 0x00,
    0x01, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x82, 0xfd,
    0x00, 0x2a,
};

/* B: scapy UC SEND_ONLY, M=1, PadCnt 2, UDP checksum 0xaca2 (IP packet). */
static const uint8_t vec_b[64] = {
    0x45, 0x01, 0x00, 0x40, 0x04, 0x78, 0x40, 0x00, 0x40, 0x11, 0xb4, 0xd5,
    0xc0, 0xa8, 0x00, 0x07, 0xc0, 0xa8, 0x00, 0x07, 0xc0, 0x00, 0x12, 0xb7,
    0x00, 0x2c, 0xac, 0xa2, 0x24, 0x60, 0xff, 0xff, 0x00, 0x00, 0x00, 0xd3,
    0x00, 0xcf, 0x17, 0x10, 0x46, 0x30, 0x81, 0x8b, 0xe2, 0x89, 0x35, 0xd9,
    0x0e, 0x9a, 0x95, 0x50, 0x54, 0x01, 0xbe, 0x88, 0x5e, 0x50, 0x00, 0x00,
    0x78, 0xf3, 0x53, 0xf3,
};

/* C: IPv4 RC ACKNOWLEDGE (IP packet). */
static const uint8_t vec_c[48] = {
    0x45, 0x00, 0x00, 0x30, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x26, 0xbb,
    0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02, 0xf8, 0x06, 0x12, 0xb7,
    0x00, 0x1c, 0x00, 0x00, 0x11, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11,
    0x00, 0x00, 0x01, 0x00, 0x1f, 0x00, 0x00, 0x01, 0xb1, 0x10, 0x78, 0x45,
};

/* D: IPv6 RC SEND_ONLY, AckReq, 8-byte payload (IP packet). */
static const uint8_t vec_d[72] = {
    0x60, 0x00, 0x00, 0x00, 0x00, 0x20, 0x11, 0x40, 0xfe, 0x80, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
    0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x02, 0xdf, 0x94, 0x12, 0xb7, 0x00, 0x20, 0x00, 0x00,
    0x04, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x12, 0x80, 0x12, 0x34, 0x56,
    0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x3e, 0xf7, 0x37, 0xc2,
};

static const uint8_t mac_a[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
static const uint8_t mac_b[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 };

/* ---- helpers ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    /* xorshift64*: deterministic, so a failure reproduces. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

static uint32_t rd32le(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

/* Ethernet header (dmac b, smac a) + an IP packet. */
static size_t eth_wrap(uint8_t *f, const uint8_t *ip, size_t iplen)
{
    memcpy(f, mac_b, 6);
    memcpy(f + 6, mac_a, 6);
    f[12] = (ip[0] >> 4) == 6 ? 0x86 : 0x08;
    f[13] = (ip[0] >> 4) == 6 ? 0xdd : 0x00;
    memcpy(f + ETH, ip, iplen);
    return ETH + iplen;
}

/* Reference CRC-32 (byte table, own code) for cross-checking the codec. */
static uint32_t ref_tab[256];

static void ref_init(void)
{
    uint32_t i, k, c;

    for (i = 0; i < 256; i++) {
        c = i;
        for (k = 0; k < 8; k++) {
            c = c & 1 ? (c >> 1) ^ 0xedb88320u : c >> 1;
        }
        ref_tab[i] = c;
    }
}

static uint32_t ref_crc(uint32_t crc, const uint8_t *p, size_t len)
{
    while (len--) {
        crc = ref_tab[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    }
    return crc;
}

/* The ICRC written out the slow way: 8 x FF, masked copy, rest. */
static uint32_t ref_icrc(const uint8_t *ip, size_t len)
{
    static const uint8_t ff[8] = {
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
    };
    uint8_t *b = malloc(len + 1);
    size_t l3 = (ip[0] >> 4) == 6 ? 40 : 20;
    uint32_t crc;
    size_t i;

    assert_non_null(b);
    memcpy(b, ip, len);
    for (i = 0; i < len; i++) {
        bool m;

        if (l3 == 40) {
            m = i == 1 || i == 2 || i == 3 || i == 7;
            if (i == 0) {
                b[0] |= 0x0f;
            }
        } else {
            m = i == 1 || i == 8 || i == 10 || i == 11;
        }
        m = m || i == l3 + 6 || i == l3 + 7 || i == l3 + 12;
        if (m) {
            b[i] = 0xff;
        }
    }
    crc = ref_crc(0xffffffffu, ff, 8);
    crc = ref_crc(crc, b, len);
    free(b);
    return ~crc;
}

/* Recompute the IPv4 header checksum and the ICRC after an edit. */
static void fixup(uint8_t *f)
{
    uint8_t *ip = f + ETH;
    size_t l3 = (ip[0] >> 4) == 6 ? 40 : 20;
    size_t udplen = (size_t)ip[l3 + 4] << 8 | ip[l3 + 5];
    uint32_t c;

    if (l3 == 20) {
        uint32_t s = 0;
        int i;

        ip[10] = ip[11] = 0;
        for (i = 0; i < 20; i += 2) {
            s += (uint32_t)ip[i] << 8 | ip[i + 1];
        }
        while (s >> 16) {
            s = (s & 0xffff) + (s >> 16);
        }
        ip[10] = (uint8_t)(~s >> 8);
        ip[11] = (uint8_t)~s;
    }
    c = ref_icrc(ip, l3 + udplen - 4);
    ip[l3 + udplen - 4] = (uint8_t)c;
    ip[l3 + udplen - 3] = (uint8_t)(c >> 8);
    ip[l3 + udplen - 2] = (uint8_t)(c >> 16);
    ip[l3 + udplen - 1] = (uint8_t)(c >> 24);
}

static void set_v4_gid(uint8_t *gid, uint8_t a, uint8_t b, uint8_t c,
                       uint8_t d)
{
    memset(gid, 0, 16);
    gid[10] = gid[11] = 0xff;
    gid[12] = a;
    gid[13] = b;
    gid[14] = c;
    gid[15] = d;
}

/* A plain packet over IPv4, 198.18.0.1 -> 198.18.0.2. */
static void base_pkt(struct kite_roce_pkt *p, uint8_t op)
{
    memset(p, 0, sizeof(*p));
    memcpy(p->dmac, mac_b, 6);
    memcpy(p->smac, mac_a, 6);
    set_v4_gid(p->sgid, 198, 18, 0, 1);
    set_v4_gid(p->dgid, 198, 18, 0, 2);
    p->hop_limit = 64;
    p->sport = 0xc132;
    p->opcode = op;
    p->pkey = KITE_BTH_PKEY_DEFAULT;
    p->dqpn = 0x102;
    p->psn = 0x10;
}

static size_t build_ok(uint8_t *f, size_t cap, const struct kite_roce_pkt *p)
{
    size_t n = kite_roce_build(f, cap, p);

    assert_true(n > 0);
    return n;
}

/* ---- ICRC vectors ---- */

static void test_icrc_vector_a(void **state)
{
    (void)state;
    assert_int_equal(kite_roce_icrc(vec_a + ETH, sizeof(vec_a) - ETH - 4),
                     0x2a00fd82);
    /* On the wire least-significant byte first. */
    assert_int_equal(rd32le(vec_a + sizeof(vec_a) - 4), 0x2a00fd82);
}

/* A CNP (0x81) is RoCEv2 the engine does not know: MALFORMED, not Ethernet. */
static void test_icrc_vector_a_cnp_unknown(void **state)
{
    struct kite_roce_pkt p;

    (void)state;
    assert_int_equal(kite_roce_parse(vec_a, sizeof(vec_a), &p),
                     KITE_ROCE_MALFORMED);
    assert_int_equal(kite_roce_op_hdrs(0x81), 0);
}

static void test_icrc_vector_b(void **state)
{
    (void)state;
    assert_int_equal(kite_roce_icrc(vec_b, sizeof(vec_b) - 4),
                     rd32le(vec_b + sizeof(vec_b) - 4));
    /* scapy shows the wire bytes as the big-endian 0x78f353f3 */
    assert_int_equal(kite_roce_icrc(vec_b, sizeof(vec_b) - 4), 0xf353f378);
}

static void test_parse_vector_b(void **state)
{
    uint8_t f[128], g[128];
    struct kite_roce_pkt p;
    size_t n = eth_wrap(f, vec_b, sizeof(vec_b)), m;

    (void)state;
    assert_int_equal(kite_roce_parse(f, n, &p), KITE_ROCE_OK);
    assert_false(p.ipv6);
    assert_int_equal(p.traffic_class, 0x01);
    assert_int_equal(p.hop_limit, 0x40);
    assert_int_equal(p.ip_id, 0x0478);
    assert_int_equal(p.sgid[10], 0xff);
    assert_int_equal(p.sgid[11], 0xff);
    assert_int_equal(p.sgid[12], 192);
    assert_int_equal(p.sgid[15], 7);
    assert_int_equal(p.sport, 0xc000);
    assert_int_equal(p.dport, 4791);
    assert_int_equal(p.opcode, KITE_BTH_UC | KITE_OP_SEND_ONLY);
    assert_false(p.se);
    assert_true(p.mig);
    assert_int_equal(p.pkey, 0xffff);
    assert_int_equal(p.dqpn, 211);
    assert_false(p.ackreq);
    assert_int_equal(p.psn, 0xcf1710);
    assert_int_equal(p.paylen, 64 - 20 - 8 - 12 - 2 - 4);
    assert_ptr_equal(p.payload, f + ETH + 40);
    assert_memory_equal(p.payload, vec_b + 40, p.paylen);
    assert_ptr_equal(p.l3, f + ETH);
    assert_int_equal(p.l3_len, 20);

    /* The rebuild differs only in the UDP checksum (we send 0). */
    m = build_ok(g, sizeof(g), &p);
    assert_int_equal(m, n);
    assert_memory_equal(g, f, ETH + 26);
    assert_int_equal(g[ETH + 26], 0);
    assert_int_equal(g[ETH + 27], 0);
    assert_memory_equal(g + ETH + 28, f + ETH + 28, n - ETH - 28);
}

static void test_vector_c(void **state)
{
    uint8_t f[128], g[128];
    struct kite_roce_pkt p;
    size_t n = eth_wrap(f, vec_c, sizeof(vec_c));

    (void)state;
    assert_int_equal(kite_roce_icrc(vec_c, sizeof(vec_c) - 4), 0x457810b1);
    assert_int_equal(kite_roce_parse(f, n, &p), KITE_ROCE_OK);
    assert_int_equal(p.opcode, KITE_OP_ACK);
    assert_int_equal(p.sport, 0xf806);
    assert_int_equal(p.dqpn, 0x11);
    assert_int_equal(p.psn, 0x100);
    assert_int_equal(p.aeth_syndrome, KITE_AETH_ACK_UNLIMITED);
    assert_int_equal(p.aeth_msn, 1);
    assert_int_equal(p.paylen, 0);
    assert_int_equal(p.hop_limit, 64);
    assert_int_equal(p.ip_id, 0);

    assert_int_equal(kite_roce_build(g, sizeof(g), &p), n);
    assert_memory_equal(g, f, n);
}

static void test_vector_d(void **state)
{
    uint8_t f[128], g[128];
    struct kite_roce_pkt p;
    size_t n = eth_wrap(f, vec_d, sizeof(vec_d));
    static const uint8_t gid2[16] = {
        0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2
    };

    (void)state;
    assert_int_equal(kite_roce_icrc(vec_d, sizeof(vec_d) - 4), 0xc237f73e);
    assert_int_equal(kite_roce_parse(f, n, &p), KITE_ROCE_OK);
    assert_true(p.ipv6);
    assert_int_equal(p.traffic_class, 0);
    assert_int_equal(p.flow_label, 0);
    assert_int_equal(p.hop_limit, 64);
    assert_memory_equal(p.dgid, gid2, 16);
    assert_int_equal(p.sport, 0xdf94);
    assert_int_equal(p.opcode, KITE_OP_SEND_ONLY);
    assert_int_equal(p.dqpn, 0x12);
    assert_true(p.ackreq);
    assert_int_equal(p.psn, 0x123456);
    assert_int_equal(p.paylen, 8);
    assert_memory_equal(p.payload, vec_d + 60, 8);
    assert_int_equal(p.l3_len, 40);

    assert_int_equal(kite_roce_build(g, sizeof(g), &p), n);
    assert_memory_equal(g, f, n);
}

/* IPv6 traffic class and flow label: placed right, masked out of the ICRC. */
static void test_vector_d_tclass_flow_label(void **state)
{
    uint8_t f[128], g[128];
    struct kite_roce_pkt p, q;
    size_t n = eth_wrap(f, vec_d, sizeof(vec_d));

    (void)state;
    assert_int_equal(kite_roce_parse(f, n, &p), KITE_ROCE_OK);
    p.traffic_class = 0xab;
    p.flow_label = 0x12345;
    p.hop_limit = 3;
    assert_int_equal(kite_roce_build(g, sizeof(g), &p), n);
    assert_int_equal(g[ETH + 0], 0x6a);
    assert_int_equal(g[ETH + 1], 0xb1);
    assert_int_equal(g[ETH + 2], 0x23);
    assert_int_equal(g[ETH + 3], 0x45);
    assert_int_equal(g[ETH + 7], 3);
    /* Everything else, the ICRC included, is vector D's. */
    assert_memory_equal(g + ETH + 4, f + ETH + 4, 3);
    assert_memory_equal(g + ETH + 8, f + ETH + 8, n - ETH - 8);
    assert_int_equal(kite_roce_parse(g, n, &q), KITE_ROCE_OK);
    assert_int_equal(q.traffic_class, 0xab);
    assert_int_equal(q.flow_label, 0x12345);
    assert_int_equal(q.hop_limit, 3);

    /* A flow label wider than 20 bits does not spill into the class. */
    p.flow_label = 0xfff00001;
    assert_int_equal(kite_roce_build(g, sizeof(g), &p), n);
    assert_int_equal(g[ETH + 1], 0xb0);
    assert_int_equal(g[ETH + 2], 0x00);
    assert_int_equal(g[ETH + 3], 0x01);
}

/* The sliced CRC against the byte-wise reference at every length/offset. */
static void test_icrc_matches_reference(void **state)
{
    uint8_t buf[600];
    size_t off, len, i;

    (void)state;
    for (i = 0; i < sizeof(buf); i++) {
        buf[i] = (uint8_t)rnd();
    }
    for (off = 0; off < 8; off++) {
        buf[off] = 0x45;            /* IPv4 */
        for (len = 0; len <= 520; len++) {
            assert_int_equal(kite_roce_icrc(buf + off, len),
                             ref_icrc(buf + off, len));
        }
        buf[off] = 0x6c;            /* IPv6 */
        for (len = 0; len <= 520; len += 3) {
            assert_int_equal(kite_roce_icrc(buf + off, len),
                             ref_icrc(buf + off, len));
        }
    }
}

/* Changing only masked fields keeps the ICRC; any other byte changes it. */
static void test_icrc_masking(void **state)
{
    uint8_t f[128];
    size_t n = eth_wrap(f, vec_c, sizeof(vec_c)), i;
    uint32_t c0 = kite_roce_icrc(f + ETH, n - ETH - 4);

    (void)state;
    for (i = 0; i < n - ETH - 4; i++) {
        bool masked = i == 1 || i == 8 || i == 10 || i == 11 ||
                      i == 26 || i == 27 || i == 32;

        f[ETH + i] ^= 0x41;
        if (masked) {
            assert_int_equal(kite_roce_icrc(f + ETH, n - ETH - 4), c0);
        } else {
            assert_int_not_equal(kite_roce_icrc(f + ETH, n - ETH - 4), c0);
        }
        f[ETH + i] ^= 0x41;
    }
}

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
        p->dmac[i] = (uint8_t)rnd();
        p->smac[i] = (uint8_t)rnd();
    }
    p->ipv6 = ipv6;
    if (ipv6) {
        for (i = 0; i < 16; i++) {
            p->sgid[i] = (uint8_t)rnd();
            p->dgid[i] = (uint8_t)rnd();
        }
        p->flow_label = (uint32_t)rnd() & 0xfffff;
    } else {
        set_v4_gid(p->sgid, (uint8_t)rnd(), (uint8_t)rnd(), (uint8_t)rnd(),
                   (uint8_t)rnd());
        set_v4_gid(p->dgid, (uint8_t)rnd(), (uint8_t)rnd(), (uint8_t)rnd(),
                   (uint8_t)rnd());
        p->ip_id = (uint16_t)rnd();
    }
    p->traffic_class = (uint8_t)rnd();
    p->hop_limit = (uint8_t)rnd();
    p->sport = (uint16_t)rnd();
    p->opcode = op;
    p->se = rnd() & 1;
    p->mig = rnd() & 1;
    p->ackreq = rnd() & 1;
    p->pkey = (uint16_t)rnd();
    p->fecn = rnd() & 1;
    p->becn = rnd() & 1;
    p->dqpn = (uint32_t)rnd() & KITE_QPN_MASK;
    p->psn = (uint32_t)rnd() & KITE_PSN_MASK;
    p->reth_va = rnd();
    p->reth_rkey = (uint32_t)rnd();
    p->reth_len = (uint32_t)rnd();
    p->aeth_syndrome = (uint8_t)rnd();
    p->aeth_msn = (uint32_t)rnd() & KITE_PSN_MASK;
    p->atomic_va = rnd();
    p->atomic_rkey = (uint32_t)rnd();
    p->atomic_swap_add = rnd();
    p->atomic_compare = rnd();
    p->atomic_orig = rnd();
    for (i = 0; i < 4; i++) {
        p->imm[i] = (uint8_t)rnd();
    }
    p->deth_qkey = (uint32_t)rnd();
    p->deth_sqpn = (uint32_t)rnd() & KITE_QPN_MASK;
    p->ieth_rkey = (uint32_t)rnd();
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
        payload[i] = (uint8_t)rnd();
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
                      (uint32_t)(rnd() % 4097);
            }
            random_pkt(&in, (uint8_t)op, ipv6,
                       payload + (len ? rnd() % (4097 - len) : 0), len);
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
    base_pkt(&p, KITE_OP_ACK);
    p.aeth_syndrome = KITE_AETH_ACK_UNLIMITED;
    p.dqpn = 0xab123456;
    p.psn = 0xcd654321;
    p.aeth_msn = 0xef000001;
    build_ok(f, sizeof(f), &p);
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
    base_pkt(&p, KITE_OP_SEND_ONLY);
    p.payload = data;
    p.paylen = 5;
    n = build_ok(f, sizeof(f), &p);
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
    /* the largest frame fits KITE_ROCE_MAX_FRAME */
    {
        static uint8_t big[4096];

        base_pkt(&p, KITE_OP_UD_SEND_ONLY_IMM);
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
        data[i] = (uint8_t)rnd();
    }
    for (k = 0; k < 4; k++) {
        static const uint8_t ops[] = { KITE_OP_SEND_ONLY, KITE_OP_WRITE_ONLY,
                                       KITE_OP_READ_RESP_ONLY,
                                       KITE_OP_UD_SEND_ONLY_IMM };

        base_pkt(&p, ops[k]);
        p.ipv6 = k & 1;
        p.payload = data;
        p.paylen = 4093 - k;
        n = build_ok(g, sizeof(g), &p);
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
    base_pkt(&p, KITE_OP_WRITE_ONLY_IMM);
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
    base_pkt(&p, KITE_OP_CMP_SWP);
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
    base_pkt(&p, KITE_OP_ATOMIC_ACK);
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
    base_pkt(&p, KITE_OP_UD_SEND_ONLY_IMM);
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
    base_pkt(&p, KITE_OP_SEND_ONLY_INV);
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
    base_pkt(&p, KITE_OP_SEND_ONLY);
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

/* ---- parse: rejection and tolerance ---- */

/* A valid IPv4 SEND_ONLY with @paylen bytes into @f; returns the length. */
static size_t good_frame(uint8_t *f, size_t cap, uint8_t op, uint32_t paylen)
{
    static const uint8_t data[64] = { 0x5a, 0xa5, 0x11, 0x22, 0x33 };
    struct kite_roce_pkt p;

    base_pkt(&p, op);
    p.payload = data;
    p.paylen = paylen;
    return build_ok(f, cap, &p);
}

static void expect(const uint8_t *f, size_t n,
                   enum kite_roce_parse_result want)
{
    struct kite_roce_pkt p;

    assert_int_equal(kite_roce_parse(f, n, &p), want);
    if (want == KITE_ROCE_NOT_ROCE) {
        static const struct kite_roce_pkt zero;

        assert_memory_equal(&p, &zero, sizeof(p));
    } else if (want != KITE_ROCE_OK) {
        /* Addresses only, from the frame; nothing from the BTH on. */
        assert_memory_equal(p.dmac, f, 6);
        assert_ptr_equal(p.l3, f + ETH);
        assert_int_equal(p.dport, KITE_ROCE_UDP_DPORT);
        assert_int_equal(p.opcode, 0);
        assert_int_equal(p.psn, 0);
        assert_int_equal(p.dqpn, 0);
        assert_int_equal(p.pkey, 0);
        assert_null(p.payload);
        assert_int_equal(p.paylen, 0);
    }
}

static void test_reject_truncated(void **state)
{
    uint8_t f[256];
    size_t n = good_frame(f, sizeof(f), KITE_OP_SEND_ONLY, 16), cut;

    (void)state;
    expect(f, n, KITE_ROCE_OK);
    /* Cut anywhere after the UDP header: MALFORMED (the IP length lies). */
    for (cut = ETH + 20 + 8; cut < n; cut++) {
        expect(f, cut, KITE_ROCE_MALFORMED);
    }
    /* Too short to see UDP port 4791: not ours. */
    for (cut = 0; cut < ETH + 20 + 8; cut++) {
        expect(f, cut, KITE_ROCE_NOT_ROCE);
    }
}

static void test_reject_udp_len_vs_ip_len(void **state)
{
    uint8_t f[256];
    size_t n = good_frame(f, sizeof(f), KITE_OP_SEND_ONLY, 16);

    (void)state;
    f[ETH + 20 + 5] -= 4;           /* UDP length 4 less than IP says */
    fixup(f);
    expect(f, n, KITE_ROCE_MALFORMED);
    f[ETH + 20 + 5] += 8;           /* 4 more */
    fixup(f);
    expect(f, n, KITE_ROCE_MALFORMED);
}

static void test_reject_udp_len_vs_frame(void **state)
{
    uint8_t f[256] = { 0 };
    size_t n = good_frame(f, sizeof(f), KITE_OP_SEND_ONLY, 16);

    (void)state;
    /* IP and UDP agree, but both claim 4 bytes more than the frame has. */
    f[ETH + 3] += 4;
    f[ETH + 20 + 5] += 4;
    fixup(f);
    expect(f, n + 4, KITE_ROCE_OK);
    expect(f, n, KITE_ROCE_MALFORMED);
}

static void test_reject_udp_len_too_short(void **state)
{
    uint8_t f[256];
    size_t n = good_frame(f, sizeof(f), KITE_OP_SEND_ONLY, 0);

    (void)state;
    /* 8 + 12 + 4 is the least a RoCEv2 packet can be: 20 is too short. */
    f[ETH + 3] -= 4;
    f[ETH + 20 + 5] -= 4;
    fixup(f);
    expect(f, n, KITE_ROCE_MALFORMED);
}

static void test_reject_tver(void **state)
{
    uint8_t f[256];
    size_t n = good_frame(f, sizeof(f), KITE_OP_SEND_ONLY, 16);

    (void)state;
    f[ETH + 28 + 1] |= 1;           /* TVer 1, ICRC made valid again */
    fixup(f);
    expect(f, n, KITE_ROCE_MALFORMED);
}

static void test_reject_unknown_opcode(void **state)
{
    static const uint8_t ops[] = { 0x15, 0x1c, 0x2c, 0x40, 0x81, 0xff };
    uint8_t f[256];
    size_t n = good_frame(f, sizeof(f), KITE_OP_SEND_ONLY, 40), i;

    (void)state;
    for (i = 0; i < ARRAY_SIZE(ops); i++) {
        f[ETH + 28] = ops[i];
        fixup(f);
        expect(f, n, KITE_ROCE_MALFORMED);
    }
}

static void test_reject_short_for_opcode(void **state)
{
    uint8_t f[256];
    size_t n = good_frame(f, sizeof(f), KITE_OP_READ_REQ, 0);

    (void)state;
    /* 16 bytes after the BTH: a READ_REQ, not an atomic (28). */
    f[ETH + 28] = KITE_OP_FETCH_ADD;
    fixup(f);
    expect(f, n, KITE_ROCE_MALFORMED);
    f[ETH + 28] = KITE_OP_ATOMIC_ACK;       /* 12: fits but 4 left over */
    fixup(f);
    expect(f, n, KITE_ROCE_MALFORMED);
    f[ETH + 28] = KITE_OP_WRITE_ONLY_IMM;   /* 20 */
    fixup(f);
    expect(f, n, KITE_ROCE_MALFORMED);
    f[ETH + 28] = KITE_OP_WRITE_ONLY;       /* 16: exactly right */
    fixup(f);
    expect(f, n, KITE_ROCE_OK);
}

static void test_reject_pad_larger_than_payload(void **state)
{
    uint8_t f[256];
    size_t n = good_frame(f, sizeof(f), KITE_OP_SEND_ONLY, 0);
    struct kite_roce_pkt p;

    (void)state;
    f[ETH + 28 + 1] |= 1 << 4;      /* PadCnt 1 with nothing after the BTH */
    fixup(f);
    expect(f, n, KITE_ROCE_MALFORMED);

    /* PadCnt 3 with 4 bytes: 1 byte of payload. */
    n = good_frame(f, sizeof(f), KITE_OP_SEND_ONLY, 4);
    f[ETH + 28 + 1] |= 3 << 4;
    fixup(f);
    assert_int_equal(kite_roce_parse(f, n, &p), KITE_ROCE_OK);
    assert_int_equal(p.paylen, 1);
}

static void test_reject_payload_on_ack(void **state)
{
    uint8_t f[256];
    size_t n = good_frame(f, sizeof(f), KITE_OP_SEND_ONLY_IMM, 4);

    (void)state;
    /* An ACK whose 4 bytes after the AETH would be payload. */
    f[ETH + 28] = KITE_OP_ACK;
    fixup(f);
    expect(f, n, KITE_ROCE_MALFORMED);
    f[ETH + 28] = KITE_OP_READ_RESP_ONLY;   /* the same bytes, allowed */
    fixup(f);
    expect(f, n, KITE_ROCE_OK);
}

static void test_reject_bad_ip_checksum(void **state)
{
    uint8_t f[256];
    size_t n = good_frame(f, sizeof(f), KITE_OP_SEND_ONLY, 8);

    (void)state;
    f[ETH + 11] ^= 1;               /* the ICRC masks it: still valid */
    expect(f, n, KITE_ROCE_MALFORMED);
}

static void test_bad_icrc_payload_bit(void **state)
{
    uint8_t f[256];
    size_t n = good_frame(f, sizeof(f), KITE_OP_SEND_ONLY, 33), bit;

    (void)state;
    expect(f, n, KITE_ROCE_OK);
    for (bit = 0; bit < 33 * 8; bit += 7) {
        f[54 + bit / 8] ^= (uint8_t)(1 << (bit % 8));
        expect(f, n, KITE_ROCE_BAD_ICRC);
        f[54 + bit / 8] ^= (uint8_t)(1 << (bit % 8));
    }
    f[n - 1] ^= 0x80;               /* the ICRC itself */
    expect(f, n, KITE_ROCE_BAD_ICRC);
    f[n - 1] ^= 0x80;
    f[54 + 35] ^= 0x02;             /* a pad byte is covered too */
    expect(f, n, KITE_ROCE_BAD_ICRC);
}

/* A rejected RoCEv2 frame still tells whom it was for. */
static void test_rejected_frame_addresses(void **state)
{
    uint8_t f[256], g[128];
    struct kite_roce_pkt p;
    size_t n = good_frame(f, sizeof(f), KITE_OP_SEND_ONLY, 8), m;
    static const uint8_t dgid4[16] = {
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 2
    };

    (void)state;
    f[n - 6] ^= 1;
    assert_int_equal(kite_roce_parse(f, n, &p), KITE_ROCE_BAD_ICRC);
    assert_false(p.ipv6);
    assert_memory_equal(p.dgid, dgid4, 16);
    assert_int_equal(p.sgid[15], 1);
    assert_int_equal(p.sport, 0xc132);
    assert_int_equal(p.hop_limit, 64);
    assert_int_equal(p.opcode, 0);

    m = eth_wrap(g, vec_d, sizeof(vec_d));
    g[ETH + 48 + 1] = 0x01;         /* TVer 1 */
    assert_int_equal(kite_roce_parse(g, m, &p), KITE_ROCE_MALFORMED);
    assert_true(p.ipv6);
    assert_memory_equal(p.dgid, vec_d + 24, 16);
    assert_memory_equal(p.sgid, vec_d + 8, 16);
    assert_int_equal(p.l3_len, 40);
    assert_int_equal(p.dqpn, 0);
}

/* TOS/TTL (with a fixed IP checksum), FECN/BECN, UDP checksum: ICRC holds. */
static void test_masked_fields_accepted(void **state)
{
    uint8_t f[256];
    size_t n = good_frame(f, sizeof(f), KITE_OP_SEND_ONLY, 8);
    struct kite_roce_pkt p;
    uint32_t icrc = rd32le(f + n - 4);

    (void)state;
    f[ETH + 1] = 0x03;              /* ECN CE */
    f[ETH + 8] = 1;                 /* TTL after many routers */
    f[ETH + 20 + 6] = 0x12;         /* UDP checksum */
    f[ETH + 20 + 7] = 0x34;
    f[ETH + 28 + 4] = 0xc0;         /* FECN | BECN */
    fixup(f);
    assert_int_equal(rd32le(f + n - 4), icrc);
    assert_int_equal(kite_roce_parse(f, n, &p), KITE_ROCE_OK);
    assert_int_equal(p.traffic_class, 3);
    assert_int_equal(p.hop_limit, 1);
    assert_true(p.fecn);
    assert_true(p.becn);
}

static void test_not_roce_arp(void **state)
{
    uint8_t f[60] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                      0x02, 0, 0, 0, 0, 1, 0x08, 0x06,
                      0x00, 0x01, 0x08, 0x00, 6, 4, 0x00, 0x01 };

    (void)state;
    expect(f, sizeof(f), KITE_ROCE_NOT_ROCE);
}

static void test_not_roce_tcp(void **state)
{
    uint8_t f[256];
    size_t n = good_frame(f, sizeof(f), KITE_OP_SEND_ONLY, 16);

    (void)state;
    f[ETH + 9] = 6;                 /* TCP, port bytes still say 4791 */
    fixup(f);
    expect(f, n, KITE_ROCE_NOT_ROCE);
}

static void test_not_roce_other_udp_port(void **state)
{
    uint8_t f[256];
    size_t n = good_frame(f, sizeof(f), KITE_OP_SEND_ONLY, 16);

    (void)state;
    f[ETH + 20 + 3] ^= 1;           /* port 4790 */
    fixup(f);
    expect(f, n, KITE_ROCE_NOT_ROCE);
    /* source port 4791 does not make it RoCE either */
    f[ETH + 20] = 0x12;
    f[ETH + 21] = 0xb7;
    fixup(f);
    expect(f, n, KITE_ROCE_NOT_ROCE);
}

static void test_not_roce_ipv4_options_fragments(void **state)
{
    uint8_t f[256];
    size_t n = good_frame(f, sizeof(f), KITE_OP_SEND_ONLY, 16);

    (void)state;
    f[ETH] = 0x46;                  /* IHL 6 */
    expect(f, n, KITE_ROCE_NOT_ROCE);
    f[ETH] = 0x45;
    f[ETH + 6] |= 0x20;             /* MF */
    fixup(f);
    expect(f, n, KITE_ROCE_NOT_ROCE);
    f[ETH + 6] = 0x40;
    f[ETH + 7] = 0x01;              /* fragment offset 8 */
    fixup(f);
    expect(f, n, KITE_ROCE_NOT_ROCE);
    f[ETH + 7] = 0x00;
    fixup(f);
    expect(f, n, KITE_ROCE_OK);
    f[12] = 0x81;                   /* VLAN tag: the kernel's business */
    expect(f, n, KITE_ROCE_NOT_ROCE);
}

static void test_not_roce_ipv6_next_header(void **state)
{
    uint8_t f[128];
    size_t n = eth_wrap(f, vec_d, sizeof(vec_d));

    (void)state;
    expect(f, n, KITE_ROCE_OK);
    f[ETH + 6] = 6;                 /* TCP */
    expect(f, n, KITE_ROCE_NOT_ROCE);
    f[ETH + 6] = 0;                 /* hop-by-hop extension header */
    expect(f, n, KITE_ROCE_NOT_ROCE);
    f[ETH + 6] = 17;
    f[13] = 0x00;                   /* EtherType IPv4 on an IPv6 packet */
    expect(f, n, KITE_ROCE_NOT_ROCE);
}

static void test_ipv6_payload_len_mismatch(void **state)
{
    uint8_t f[128] = { 0 };
    size_t n = eth_wrap(f, vec_d, sizeof(vec_d));

    (void)state;
    f[ETH + 5] += 4;                /* IPv6 payload length > UDP length */
    expect(f, n + 4, KITE_ROCE_MALFORMED);
    f[ETH + 5] -= 4;
    f[ETH + 40 + 5] -= 4;           /* UDP length < IPv6 payload length */
    expect(f, n, KITE_ROCE_MALFORMED);
}

static void test_ethernet_padding_accepted(void **state)
{
    uint8_t f[256];
    struct kite_roce_pkt p;
    size_t n = good_frame(f, sizeof(f), KITE_OP_SEND_ONLY, 0);

    (void)state;
    /* 58 bytes: a NIC pads it to the 60-byte minimum with zeros. */
    assert_int_equal(n, 58);
    memset(f + n, 0, 64);
    assert_int_equal(kite_roce_parse(f, 60, &p), KITE_ROCE_OK);
    assert_int_equal(p.paylen, 0);
    /* Junk after the packet is not payload either. */
    memset(f + n, 0xee, 64);
    assert_int_equal(kite_roce_parse(f, n + 64, &p), KITE_ROCE_OK);
    assert_int_equal(p.paylen, 0);

    n = good_frame(f, sizeof(f), KITE_OP_SEND_ONLY, 3);
    memset(f + n, 0xee, 16);
    assert_int_equal(kite_roce_parse(f, n + 16, &p), KITE_ROCE_OK);
    assert_int_equal(p.paylen, 3);
    assert_memory_equal(p.payload, "\x5a\xa5\x11", 3);
}

/* ---- throughput ---- */

static void test_icrc_throughput(void **state)
{
    const size_t len = 64u << 20;
    uint8_t *buf = malloc(len);
    struct timespec t0, t1;
    uint32_t c;
    double s;
    size_t i;

    (void)state;
    assert_non_null(buf);
    for (i = 0; i < len; i++) {
        buf[i] = (uint8_t)(i * 131 + (i >> 12));
    }
    buf[0] = 0x45;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    c = kite_roce_icrc(buf, len);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    s = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (s <= 0) {
        s = 0.000001;
    }
    fprintf(stderr, "# ICRC of 64 MiB: %.3f s, %.0f MB/s\n", s, len / 1e6 / s);
    assert_int_equal(c, ref_icrc(buf, len));
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_icrc_vector_a),
        cmocka_unit_test(test_icrc_vector_a_cnp_unknown),
        cmocka_unit_test(test_icrc_vector_b),
        cmocka_unit_test(test_parse_vector_b),
        cmocka_unit_test(test_vector_c),
        cmocka_unit_test(test_vector_d),
        cmocka_unit_test(test_vector_d_tclass_flow_label),
        cmocka_unit_test(test_icrc_matches_reference),
        cmocka_unit_test(test_icrc_masking),
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
        cmocka_unit_test(test_reject_truncated),
        cmocka_unit_test(test_reject_udp_len_vs_ip_len),
        cmocka_unit_test(test_reject_udp_len_vs_frame),
        cmocka_unit_test(test_reject_udp_len_too_short),
        cmocka_unit_test(test_reject_tver),
        cmocka_unit_test(test_reject_unknown_opcode),
        cmocka_unit_test(test_reject_short_for_opcode),
        cmocka_unit_test(test_reject_pad_larger_than_payload),
        cmocka_unit_test(test_reject_payload_on_ack),
        cmocka_unit_test(test_reject_bad_ip_checksum),
        cmocka_unit_test(test_bad_icrc_payload_bit),
        cmocka_unit_test(test_rejected_frame_addresses),
        cmocka_unit_test(test_masked_fields_accepted),
        cmocka_unit_test(test_not_roce_arp),
        cmocka_unit_test(test_not_roce_tcp),
        cmocka_unit_test(test_not_roce_other_udp_port),
        cmocka_unit_test(test_not_roce_ipv4_options_fragments),
        cmocka_unit_test(test_not_roce_ipv6_next_header),
        cmocka_unit_test(test_ipv6_payload_len_mismatch),
        cmocka_unit_test(test_ethernet_padding_accepted),
        cmocka_unit_test(test_icrc_throughput),
    };

    ref_init();
    return cmocka_run_group_tests_name("roce_pkt", tests, NULL, NULL);
}
