/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The RoCEv2 ICRC of qemu/roce/kite_roce_pkt.c: the vectors of roce-facts
 * §4.4 (captured and computed frames, parsed and rebuilt), a byte-wise
 * reference at every length and offset, the invariant-field masking and
 * the throughput, with each CRC implementation (table, PCLMULQDQ,
 * VPCLMULQDQ), and the raw CRC-32 against a bit-at-a-time one. Expected
 * bytes come from the vectors or were computed independently (Python zlib), never by calling the codec a second time.
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

#include "kite_roce_crc.h"
#include "kite_roce_pkt.h"
#include "roce_frames.h"

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

/* ---- ICRC vectors ---- */

static void test_icrc_vector_a(void **state)
{
    (void)state;
    assert_int_equal(kite_roce_icrc(vec_a + ETH, sizeof(vec_a) - ETH - 4),
                     0x2a00fd82);
    /* On the wire least-significant byte first. */
    assert_int_equal(pkt_rd32le(vec_a + sizeof(vec_a) - 4), 0x2a00fd82);
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
                     pkt_rd32le(vec_b + sizeof(vec_b) - 4));
    /* scapy shows the wire bytes as the big-endian 0x78f353f3 */
    assert_int_equal(kite_roce_icrc(vec_b, sizeof(vec_b) - 4), 0xf353f378);
}

/*
 * kite_roce_build() in its two halves, the payload CRCed as it is copied
 * in (as the engine sends with a host's mem_read_crc): the frame length,
 * and the frame in @g.
 */
static size_t build_halves(uint8_t *g, size_t cap,
                           const struct kite_roce_pkt *p)
{
    uint32_t crc = 0;
    size_t off = kite_roce_build_hdr(g, cap, p, &crc);

    if (!off) {
        return 0;
    }
    assert_int_equal(off, kite_roce_payload_offset(p));
    crc = kite_roce_crc32_copy(crc, g + off, p->payload, p->paylen);
    return kite_roce_build_end(g, p, crc);
}

/* Both ways of building @p give the same bytes; the length returned. */
static size_t build_both(uint8_t *g, size_t cap,
                         const struct kite_roce_pkt *p)
{
    uint8_t *h = malloc(cap);
    size_t n = kite_roce_build(g, cap, p);

    assert_non_null(h);
    assert_int_equal(build_halves(h, cap, p), n);
    assert_memory_equal(h, g, n);
    free(h);
    return n;
}

static void test_parse_vector_b(void **state)
{
    uint8_t f[128], g[128];
    struct kite_roce_pkt p;
    size_t n = pkt_eth_wrap(f, vec_b, sizeof(vec_b)), m;

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
    m = pkt_build_ok(g, sizeof(g), &p);
    assert_int_equal(m, n);
    assert_int_equal(build_both(g, sizeof(g), &p), n);
    assert_memory_equal(g, f, ETH + 26);
    assert_int_equal(g[ETH + 26], 0);
    assert_int_equal(g[ETH + 27], 0);
    assert_memory_equal(g + ETH + 28, f + ETH + 28, n - ETH - 28);
}

static void test_vector_c(void **state)
{
    uint8_t f[128], g[128];
    struct kite_roce_pkt p;
    size_t n = pkt_eth_wrap(f, vec_c, sizeof(vec_c));

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

    assert_int_equal(build_both(g, sizeof(g), &p), n);
    assert_memory_equal(g, f, n);
}

static void test_vector_d(void **state)
{
    uint8_t f[128], g[128];
    struct kite_roce_pkt p;
    size_t n = pkt_eth_wrap(f, pkt_vec_d, sizeof(pkt_vec_d));
    static const uint8_t gid2[16] = {
        0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2
    };

    (void)state;
    assert_int_equal(kite_roce_icrc(pkt_vec_d, sizeof(pkt_vec_d) - 4),
                     0xc237f73e);
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
    assert_memory_equal(p.payload, pkt_vec_d + 60, 8);
    assert_int_equal(p.l3_len, 40);

    assert_int_equal(build_both(g, sizeof(g), &p), n);
    assert_memory_equal(g, f, n);
}

/* IPv6 traffic class and flow label: placed right, masked out of the ICRC. */
static void test_vector_d_tclass_flow_label(void **state)
{
    uint8_t f[128], g[128];
    struct kite_roce_pkt p, q;
    size_t n = pkt_eth_wrap(f, pkt_vec_d, sizeof(pkt_vec_d));

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
        buf[i] = (uint8_t)pkt_rnd();
    }
    for (off = 0; off < 8; off++) {
        buf[off] = 0x45;            /* IPv4 */
        for (len = 0; len <= 520; len++) {
            assert_int_equal(kite_roce_icrc(buf + off, len),
                             pkt_ref_icrc(buf + off, len));
        }
        buf[off] = 0x6c;            /* IPv6 */
        for (len = 0; len <= 520; len += 3) {
            assert_int_equal(kite_roce_icrc(buf + off, len),
                             pkt_ref_icrc(buf + off, len));
        }
    }
}

/* Changing only masked fields keeps the ICRC; any other byte changes it. */
static void test_icrc_masking(void **state)
{
    uint8_t f[128];
    size_t n = pkt_eth_wrap(f, vec_c, sizeof(vec_c)), i;
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

/* ---- the raw CRC-32 against a bit-at-a-time one ---- */

/* One bit per step, straight from the reflected polynomial. */
static uint32_t bitwise_crc32(uint32_t crc, const uint8_t *p, size_t len)
{
    int k;

    while (len--) {
        crc ^= *p++;
        for (k = 0; k < 8; k++) {
            crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
        }
    }
    return crc;
}

/*
 * Every length up to 300 at every alignment of a 16-byte block, then
 * lengths to past 4 KiB at a few alignments, from changing start states:
 * covers the carry-less path's 64-byte loop, 16-byte loop and tail.
 */
static void test_crc32_matches_bitwise(void **state)
{
    enum { MAX = 4200 + 16 };
    uint8_t *buf = malloc(MAX);
    static const size_t offs[] = { 0, 1, 7, 15 };
    size_t off, len, i;
    uint32_t seed;

    (void)state;
    assert_non_null(buf);
    for (i = 0; i < MAX; i++) {
        buf[i] = (uint8_t)pkt_rnd();
    }
    for (off = 0; off < 16; off++) {
        for (len = 0; len <= 300; len++) {
            seed = (uint32_t)pkt_rnd();
            assert_int_equal(kite_roce_crc32(seed, buf + off, len),
                             bitwise_crc32(seed, buf + off, len));
        }
    }
    for (i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
        for (len = 301; len <= 4200; len += 13) {
            seed = (uint32_t)pkt_rnd();
            assert_int_equal(kite_roce_crc32(seed, buf + offs[i], len),
                             bitwise_crc32(seed, buf + offs[i], len));
        }
    }
    /* All ones and all zeros, where a wrong fold constant shows too. */
    memset(buf, 0xff, MAX);
    assert_int_equal(kite_roce_crc32(~0u, buf, 4096),
                     bitwise_crc32(~0u, buf, 4096));
    memset(buf, 0, MAX);
    assert_int_equal(kite_roce_crc32(~0u, buf, 4096),
                     bitwise_crc32(~0u, buf, 4096));
    free(buf);
}

/* The masked header fields of a frame with a long payload. */
static void test_icrc_masking_long(void **state)
{
    enum { PAY = 2048 };
    uint8_t ip[sizeof(vec_c) + PAY];
    size_t n = sizeof(ip) - 4, i;
    uint32_t c0;

    (void)state;
    memcpy(ip, vec_c, 40);
    for (i = 40; i < sizeof(ip); i++) {
        ip[i] = (uint8_t)pkt_rnd();
    }
    c0 = kite_roce_icrc(ip, n);
    assert_int_equal(c0, pkt_ref_icrc(ip, n));
    for (i = 0; i < 40; i++) {
        bool masked = i == 1 || i == 8 || i == 10 || i == 11 ||
                      i == 26 || i == 27 || i == 32;

        ip[i] ^= 0x24;
        if (masked) {
            assert_int_equal(kite_roce_icrc(ip, n), c0);
        } else {
            assert_int_not_equal(kite_roce_icrc(ip, n), c0);
        }
        ip[i] ^= 0x24;
    }
    /* And a payload byte near the end. */
    ip[n - 5] ^= 1;
    assert_int_not_equal(kite_roce_icrc(ip, n), c0);
}

/*
 * The CRC fused with a copy: the bitwise CRC of the source, the bytes
 * copied and nothing written around them, at every length to 300 and
 * frame lengths beyond, at misaligned source and destination.
 */
static void test_crc32_copy_matches_bitwise(void **state)
{
    enum { MAX = 4200 + 16, GUARD = 32 };
    uint8_t *src = malloc(MAX), *dst = malloc(MAX + 2 * GUARD);
    size_t so, d, len, i;
    uint32_t seed;

    (void)state;
    assert_non_null(src);
    assert_non_null(dst);
    for (i = 0; i < MAX; i++) {
        src[i] = (uint8_t)pkt_rnd();
    }
    for (so = 0; so < 16; so += 3) {
        for (d = 0; d < 16; d += 5) {
            for (len = 0; len + so <= MAX - 16; len += len < 300 ? 1 : 29) {
                seed = (uint32_t)pkt_rnd();
                memset(dst, 0xa5, MAX + 2 * GUARD);
                assert_int_equal(kite_roce_crc32_copy(seed, dst + GUARD + d,
                                                      src + so, len),
                                 bitwise_crc32(seed, src + so, len));
                assert_memory_equal(dst + GUARD + d, src + so, len);
                for (i = 0; i < GUARD + d; i++) {
                    assert_int_equal(dst[i], 0xa5);
                }
                for (i = GUARD + d + len; i < MAX + 2 * GUARD; i++) {
                    assert_int_equal(dst[i], 0xa5);
                }
            }
        }
    }
    free(src);
    free(dst);
}

/*
 * Random packets of every opcode with payload, IPv4 and IPv6, payloads
 * to 4 KiB: the two halves build what kite_roce_build() does, and the
 * ICRC is the reference's.
 */
static void test_build_halves_random(void **state)
{
    static const uint8_t ops[] = {
        KITE_OP_SEND_FIRST, KITE_OP_SEND_ONLY_IMM, KITE_OP_WRITE_FIRST,
        KITE_OP_WRITE_MIDDLE, KITE_OP_WRITE_LAST_IMM, KITE_OP_WRITE_ONLY,
        KITE_OP_READ_RESP_FIRST, KITE_OP_READ_RESP_ONLY,
        KITE_OP_SEND_LAST_INV, KITE_OP_UD_SEND_ONLY_IMM,
    };
    enum { CAP = KITE_ROCE_MAX_FRAME };
    uint8_t *data = malloc(KITE_ROCE_MAX_PAYLOAD), *g = malloc(CAP);
    struct kite_roce_pkt p;
    size_t n, i, k;

    (void)state;
    assert_non_null(data);
    assert_non_null(g);
    for (i = 0; i < KITE_ROCE_MAX_PAYLOAD; i++) {
        data[i] = (uint8_t)pkt_rnd();
    }
    for (k = 0; k < 400; k++) {
        p = kite_roce_pkt_zero;
        p.opcode = ops[k % sizeof(ops)];
        p.ipv6 = k & 1;
        for (i = 0; i < 16; i++) {
            p.sgid[i] = (uint8_t)pkt_rnd();
            p.dgid[i] = (uint8_t)pkt_rnd();
        }
        p.traffic_class = (uint8_t)pkt_rnd();
        p.hop_limit = (uint8_t)pkt_rnd();
        p.flow_label = (uint32_t)pkt_rnd();
        p.ip_id = (uint16_t)pkt_rnd();
        p.sport = (uint16_t)pkt_rnd();
        p.dqpn = (uint32_t)pkt_rnd();
        p.psn = (uint32_t)pkt_rnd();
        p.reth_va = pkt_rnd();
        p.reth_rkey = (uint32_t)pkt_rnd();
        p.deth_qkey = (uint32_t)pkt_rnd();
        p.ieth_rkey = (uint32_t)pkt_rnd();
        p.ackreq = k & 2;
        p.paylen = (uint32_t)(pkt_rnd() % (KITE_ROCE_MAX_PAYLOAD + 1));
        if (k % 7 == 0) {
            p.paylen = k % 14 ? KITE_ROCE_MAX_PAYLOAD : 0;
        }
        p.payload = data + (KITE_ROCE_MAX_PAYLOAD - p.paylen);
        n = build_both(g, CAP, &p);
        assert_true(n > KITE_ETH_HLEN + KITE_ICRC_LEN);
        assert_int_equal((uint32_t)g[n - 4] | (uint32_t)g[n - 3] << 8 |
                         (uint32_t)g[n - 2] << 16 | (uint32_t)g[n - 1] << 24,
                         pkt_ref_icrc(g + KITE_ETH_HLEN,
                                      n - KITE_ETH_HLEN - KITE_ICRC_LEN));
        assert_int_equal(kite_roce_parse(g, n, &p), KITE_ROCE_OK);
    }
    free(data);
    free(g);
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
    assert_int_equal(c, pkt_ref_icrc(buf, len));
    free(buf);
}

/*
 * Every test runs once per CRC implementation, after the table with
 * "clmul_" and "vclmul_" before its name. An implementation this CPU
 * lacks is one skipped case named after it.
 */
static int use_table(void **state)
{
    (void)state;
    return kite_roce_crc_select(KITE_ROCE_CRC_TABLE) ? 0 : -1;
}

static int use_clmul(void **state)
{
    (void)state;
    return kite_roce_crc_select(KITE_ROCE_CRC_CLMUL) ? 0 : -1;
}

static int use_vclmul(void **state)
{
    (void)state;
    return kite_roce_crc_select(KITE_ROCE_CRC_VCLMUL) ? 0 : -1;
}

static void test_impl_unavailable(void **state)
{
    (void)state;
    skip();
}

#define NAME_MAX_LEN    64

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
        cmocka_unit_test(test_crc32_matches_bitwise),
        cmocka_unit_test(test_icrc_masking_long),
        cmocka_unit_test(test_crc32_copy_matches_bitwise),
        cmocka_unit_test(test_build_halves_random),
        cmocka_unit_test(test_icrc_throughput),
    };
    struct CMUnitTest none[] = {
        cmocka_unit_test(test_impl_unavailable),
    };
    enum { N = sizeof(tests) / sizeof(tests[0]) };
    static const struct {
        enum kite_roce_crc_impl impl;
        const char *prefix;
        CMFixtureFunction setup;
    } impls[] = {
        { KITE_ROCE_CRC_CLMUL, "clmul", use_clmul },
        { KITE_ROCE_CRC_VCLMUL, "vclmul", use_vclmul },
    };
    static struct CMUnitTest again[N];
    static char names[N][NAME_MAX_LEN];
    int rc, i, j;

    rc = cmocka_run_group_tests_name("roce_icrc", tests, use_table, NULL);
    for (j = 0; j < (int)(sizeof(impls) / sizeof(impls[0])); j++) {
        if (!kite_roce_crc_select(impls[j].impl)) {
            none[0].name = impls[j].prefix;
            rc |= cmocka_run_group_tests_name("roce_icrc_unavailable", none,
                                              NULL, NULL);
            continue;
        }
        for (i = 0; i < N; i++) {
            again[i] = tests[i];
            snprintf(names[i], sizeof(names[i]), "%s_%s", impls[j].prefix,
                     tests[i].name);
            again[i].name = names[i];
        }
        rc |= cmocka_run_group_tests_name("roce_icrc_carryless", again,
                                          impls[j].setup, NULL);
    }
    return rc;
}
