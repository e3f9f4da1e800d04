/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The RoCEv2 frame parser of qemu/roce/kite_roce_pkt.c: what it rejects
 * (MALFORMED, BAD_ICRC) and tolerates, what is not RoCEv2 at all, and
 * that kite_roce_frame_peek() classifies every such frame as the parser
 * does.
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

#include "kite_roce.h"
#include "kite_roce_pkt.h"
#include "roce_frames.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- parse: rejection and tolerance ---- */

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
    c = pkt_ref_icrc(ip, l3 + udplen - 4);
    ip[l3 + udplen - 4] = (uint8_t)c;
    ip[l3 + udplen - 3] = (uint8_t)(c >> 8);
    ip[l3 + udplen - 2] = (uint8_t)(c >> 16);
    ip[l3 + udplen - 1] = (uint8_t)(c >> 24);
}

/* A valid IPv4 SEND_ONLY with @paylen bytes into @f; returns the length. */
static size_t good_frame(uint8_t *f, size_t cap, uint8_t op, uint32_t paylen)
{
    static const uint8_t data[64] = { 0x5a, 0xa5, 0x11, 0x22, 0x33 };
    struct kite_roce_pkt p;

    pkt_base(&p, op);
    p.payload = data;
    p.paylen = paylen;
    return pkt_build_ok(f, cap, &p);
}

/*
 * Parse @f and check the result, and that kite_roce_frame_peek() calls
 * the frame RoCEv2 exactly when the parser does.
 */
static void expect(const uint8_t *f, size_t n,
                   enum kite_roce_parse_result want)
{
    struct kite_roce_frame_info fi;
    struct kite_roce_pkt p;

    assert_int_equal(kite_roce_parse(f, n, &p), want);
    assert_int_equal(kite_roce_frame_peek(f, n, &fi),
                     want != KITE_ROCE_NOT_ROCE);
    if (want == KITE_ROCE_OK) {
        assert_int_equal(fi.opcode, p.opcode);
        assert_int_equal(fi.dqpn, p.dqpn);
        assert_int_equal(fi.psn, p.psn);
    }
    if (want != KITE_ROCE_NOT_ROCE) {
        assert_memory_equal(fi.dgid, p.dgid, sizeof(fi.dgid));
    }
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

    m = pkt_eth_wrap(g, pkt_vec_d, sizeof(pkt_vec_d));
    g[ETH + 48 + 1] = 0x01;         /* TVer 1 */
    assert_int_equal(kite_roce_parse(g, m, &p), KITE_ROCE_MALFORMED);
    assert_true(p.ipv6);
    assert_memory_equal(p.dgid, pkt_vec_d + 24, 16);
    assert_memory_equal(p.sgid, pkt_vec_d + 8, 16);
    assert_int_equal(p.l3_len, 40);
    assert_int_equal(p.dqpn, 0);
}

/* TOS/TTL (with a fixed IP checksum), FECN/BECN, UDP checksum: ICRC holds. */
static void test_masked_fields_accepted(void **state)
{
    uint8_t f[256];
    size_t n = good_frame(f, sizeof(f), KITE_OP_SEND_ONLY, 8);
    struct kite_roce_pkt p;
    uint32_t icrc = pkt_rd32le(f + n - 4);

    (void)state;
    f[ETH + 1] = 0x03;              /* ECN CE */
    f[ETH + 8] = 1;                 /* TTL after many routers */
    f[ETH + 20 + 6] = 0x12;         /* UDP checksum */
    f[ETH + 20 + 7] = 0x34;
    f[ETH + 28 + 4] = 0xc0;         /* FECN | BECN */
    fixup(f);
    assert_int_equal(pkt_rd32le(f + n - 4), icrc);
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
    size_t n = pkt_eth_wrap(f, pkt_vec_d, sizeof(pkt_vec_d));

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
    size_t n = pkt_eth_wrap(f, pkt_vec_d, sizeof(pkt_vec_d));

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

/* ---- the host's peek ---- */

/*
 * The BTH fields as the frame carries them, whatever the rest; zeros
 * when the frame ends before a whole BTH (the address is still read);
 * nothing for other frames.
 */
static void test_frame_peek(void **state)
{
    static const struct kite_roce_frame_info zero;
    struct kite_roce_frame_info fi;
    struct kite_roce_pkt p;
    uint8_t f[256];
    size_t n, bth = ETH + 20 + 8;

    (void)state;
    pkt_base(&p, KITE_OP_READ_REQ);
    p.dqpn = 0xabcdef;
    p.psn = 0xfedcba;
    p.reth_len = 64;
    n = pkt_build_ok(f, sizeof(f), &p);
    assert_true(kite_roce_frame_peek(f, n, &fi));
    assert_int_equal(fi.opcode, KITE_OP_READ_REQ);
    assert_int_equal(fi.dqpn, 0xabcdef);
    assert_int_equal(fi.psn, 0xfedcba);

    /* A bad ICRC or TVer is the parser's business, not the peek's. */
    f[n - 1] ^= 1;
    f[bth + 1] |= 0x0f;
    assert_true(kite_roce_frame_peek(f, n, &fi));
    assert_int_equal(fi.dqpn, 0xabcdef);

    /* One byte short of a BTH: RoCEv2, BTH fields unknown. */
    assert_true(kite_roce_frame_peek(f, bth + 11, &fi));
    assert_int_equal(fi.opcode, 0);
    assert_int_equal(fi.dqpn, 0);
    assert_int_equal(fi.psn, 0);
    assert_memory_equal(fi.dgid, p.dgid, sizeof(fi.dgid));
    assert_true(kite_roce_frame_peek(f, bth + 12, &fi));
    assert_int_equal(fi.psn, 0xfedcba);

    /* Another UDP port: not RoCEv2, and @fi is cleared. */
    f[ETH + 20 + 2] ^= 1;
    assert_false(kite_roce_frame_peek(f, n, &fi));
    assert_memory_equal(&fi, &zero, sizeof(fi));
    assert_false(kite_roce_frame_peek(f, 10, &fi));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
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
        cmocka_unit_test(test_frame_peek),
    };

    return cmocka_run_group_tests_name("roce_parse", tests, NULL, NULL);
}
