/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 engine: frame codec (build, parse, ICRC, opcode table,
 * segmentation). QEMU-free. Wire format: InfiniBand chapter 9 (BTH and
 * extended headers) and Annex A17 (RoCEv2 encapsulation, ICRC).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <string.h>

#include "kite_roce.h"
#include "kite_roce_crc.h"
#include "kite_roce_pkt.h"

#define IPV4_FLAG_DF            0x4000
#define IPV4_FRAG_MASK          0x3fff  /* MF and fragment offset */
#define IPV4_DEFAULT_HDR        0x45    /* version 4, IHL 5 */
#define IP_PROTO_UDP            17
#define BTH_TVER_MASK           0x0f
#define BTH_PAD_SHIFT           4

/*
 * CRC state (before the final inversion) after the 8 bytes of 0xFF that
 * stand in for the LRH, starting from all ones: saves 8 CRC steps per
 * packet and is what the ICRC always starts with.
 */
#define ICRC_SEED               0xdebb20e3u

/* ---- byte access (wire order is big-endian except the ICRC) ---- */

static inline uint16_t ld16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t ld24(const uint8_t *p)
{
    return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static inline uint32_t ld32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
           (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t ld64(const uint8_t *p)
{
    return (uint64_t)ld32(p) << 32 | ld32(p + 4);
}

static inline uint32_t ld32le(const uint8_t *p)
{
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 |
           (uint32_t)p[1] << 8 | p[0];
}

static inline void st16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static inline void st24(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 16);
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)v;
}

static inline void st32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline void st64(uint8_t *p, uint64_t v)
{
    st32(p, (uint32_t)(v >> 32));
    st32(p + 4, (uint32_t)v);
}

static inline void st32le(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/*
 * The invariant-field masks of Annex A17 over the start of the packet, as
 * bits forced to one: the fields a router may rewrite (IPv4 TOS, TTL and
 * header checksum; IPv6 traffic class, flow label and hop limit), the UDP
 * checksum and BTH byte 4 (FECN, BECN, resv6).
 */
#define ICRC_V4_UDP             KITE_IPV4_HDR_LEN
#define ICRC_V6_UDP             KITE_IPV6_HDR_LEN
static const uint8_t icrc_mask_v4[KITE_ROCE_CRC_FIRST_LEN] = {
    [1] = 0xff,                             /* TOS */
    [8] = 0xff,                             /* TTL */
    [10] = 0xff, [11] = 0xff,               /* header checksum */
    [ICRC_V4_UDP + 6] = 0xff, [ICRC_V4_UDP + 7] = 0xff,
    [ICRC_V4_UDP + KITE_UDP_HDR_LEN + 4] = 0xff,
};
static const uint8_t icrc_mask_v6[KITE_ROCE_CRC_FIRST_LEN] = {
    [0] = 0x0f,                             /* traffic class, flow label */
    [1] = 0xff, [2] = 0xff, [3] = 0xff,
    [7] = 0xff,                             /* hop limit */
    [ICRC_V6_UDP + 6] = 0xff, [ICRC_V6_UDP + 7] = 0xff,
    [ICRC_V6_UDP + KITE_UDP_HDR_LEN + 4] = 0xff,
};

/* The longest header stack after Ethernet, as icrc_hdr_state() takes it. */
#define ICRC_HDR_MAX            (2 * KITE_ROCE_CRC_FIRST_LEN)
static_assert(KITE_ROCE_MAX_HDR_LEN - KITE_ETH_HLEN <= ICRC_HDR_MAX,
              "ICRC header block too short");

/* The masked fields must lie within what kite_roce_crc32_or() masks. */
static_assert(KITE_IPV6_HDR_LEN + KITE_UDP_HDR_LEN + KITE_BTH_LEN <=
              KITE_ROCE_CRC_FIRST_LEN, "ICRC masked header too long");

uint32_t kite_roce_icrc(const uint8_t *ip, size_t len)
{
    const uint8_t *mask;
    uint8_t hdr[KITE_ROCE_CRC_FIRST_LEN];
    size_t i;

    if (!len) {
        return ~ICRC_SEED;
    }
    mask = (ip[0] >> 4) == 6 ? icrc_mask_v6 : icrc_mask_v4;
    if (len >= KITE_ROCE_CRC_FIRST_LEN) {
        return ~kite_roce_crc32_or(ICRC_SEED, ip, len, mask);
    }
    /* A short packet: mask a copy (and CRC only the bytes present). */
    for (i = 0; i < len; i++) {
        hdr[i] = ip[i] | mask[i];
    }
    return ~kite_roce_crc32(ICRC_SEED, hdr, len);
}

/* ---- opcode table ---- */

/* Payload-carrying requests (SEND, WRITE) and read responses. */
#define OP_DATA     (KITE_OPF_VALID | KITE_OPF_PAYLOAD | KITE_OPF_REQUEST)
#define OP_RESP     (KITE_OPF_VALID | KITE_OPF_PAYLOAD)
#define OP_F        KITE_OPF_FIRST
#define OP_L        KITE_OPF_LAST
/* Whole messages in one packet without payload. */
#define OP_ONE      (KITE_OPF_VALID | KITE_OPF_FIRST | KITE_OPF_LAST)

/* RC and UD; UC uses the RC SEND and WRITE rows (op_lookup()). */
static const uint32_t op_table[256] = {
    [KITE_OP_SEND_FIRST] = OP_DATA | OP_F,
    [KITE_OP_SEND_MIDDLE] = OP_DATA,
    [KITE_OP_SEND_LAST] = OP_DATA | OP_L,
    [KITE_OP_SEND_LAST_IMM] = OP_DATA | OP_L | KITE_HDR_IMMDT,
    [KITE_OP_SEND_ONLY] = OP_DATA | OP_F | OP_L,
    [KITE_OP_SEND_ONLY_IMM] = OP_DATA | OP_F | OP_L | KITE_HDR_IMMDT,
    [KITE_OP_WRITE_FIRST] = OP_DATA | OP_F | KITE_HDR_RETH,
    [KITE_OP_WRITE_MIDDLE] = OP_DATA,
    [KITE_OP_WRITE_LAST] = OP_DATA | OP_L,
    [KITE_OP_WRITE_LAST_IMM] = OP_DATA | OP_L | KITE_HDR_IMMDT,
    [KITE_OP_WRITE_ONLY] = OP_DATA | OP_F | OP_L | KITE_HDR_RETH,
    [KITE_OP_WRITE_ONLY_IMM] = OP_DATA | OP_F | OP_L | KITE_HDR_RETH |
                               KITE_HDR_IMMDT,
    [KITE_OP_READ_REQ] = OP_ONE | KITE_OPF_REQUEST | KITE_HDR_RETH,
    [KITE_OP_READ_RESP_FIRST] = OP_RESP | OP_F | KITE_HDR_AETH,
    [KITE_OP_READ_RESP_MIDDLE] = OP_RESP,
    [KITE_OP_READ_RESP_LAST] = OP_RESP | OP_L | KITE_HDR_AETH,
    [KITE_OP_READ_RESP_ONLY] = OP_RESP | OP_F | OP_L | KITE_HDR_AETH,
    [KITE_OP_ACK] = OP_ONE | KITE_HDR_AETH,
    [KITE_OP_ATOMIC_ACK] = OP_ONE | KITE_HDR_AETH | KITE_HDR_ATOMIC_ACK_ETH,
    [KITE_OP_CMP_SWP] = OP_ONE | KITE_OPF_REQUEST | KITE_HDR_ATOMIC_ETH,
    [KITE_OP_FETCH_ADD] = OP_ONE | KITE_OPF_REQUEST | KITE_HDR_ATOMIC_ETH,
    [KITE_OP_SEND_LAST_INV] = OP_DATA | OP_L | KITE_HDR_IETH,
    [KITE_OP_SEND_ONLY_INV] = OP_DATA | OP_F | OP_L | KITE_HDR_IETH,
    [KITE_OP_UD_SEND_ONLY] = OP_DATA | OP_F | OP_L | KITE_HDR_DETH,
    [KITE_OP_UD_SEND_ONLY_IMM] = OP_DATA | OP_F | OP_L | KITE_HDR_DETH |
                                 KITE_HDR_IMMDT,
};

#undef OP_DATA
#undef OP_RESP
#undef OP_F
#undef OP_L
#undef OP_ONE

static uint32_t op_lookup(uint8_t op)
{
    if (KITE_BTH_TRANSPORT(op) == KITE_BTH_UC) {
        /* UC has SEND and WRITE only, laid out as RC's. */
        return (op & 0x1f) <= KITE_OP_WRITE_ONLY_IMM ? op_table[op & 0x1f] : 0;
    }
    return op_table[op];
}

uint32_t kite_roce_op_hdrs(uint8_t op)
{
    return op_lookup(op);
}

uint32_t kite_roce_op_ext_len(uint8_t op)
{
    uint32_t h = op_lookup(op);

    return (h & KITE_HDR_RETH ? KITE_RETH_LEN : 0) +
           (h & KITE_HDR_AETH ? KITE_AETH_LEN : 0) +
           (h & KITE_HDR_ATOMIC_ETH ? KITE_ATOMIC_ETH_LEN : 0) +
           (h & KITE_HDR_ATOMIC_ACK_ETH ? KITE_ATOMIC_ACK_ETH_LEN : 0) +
           (h & KITE_HDR_IMMDT ? KITE_IMMDT_LEN : 0) +
           (h & KITE_HDR_DETH ? KITE_DETH_LEN : 0) +
           (h & KITE_HDR_IETH ? KITE_IETH_LEN : 0);
}

/* ---- build ---- */

/* The IPv4 checksum of a one's complement sum of 16-bit words. */
static uint16_t csum_fold(uint64_t sum)
{
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return (uint16_t)~sum;
}

/* Checksum of a received header: 32 bits at a time, then folded. */
static uint16_t ipv4_csum(const uint8_t *h)
{
    uint64_t sum = 0;
    int i;

    for (i = 0; i < KITE_IPV4_HDR_LEN; i += 4) {
        sum += ld32(h + i);
    }
    return csum_fold(sum);
}

/* Extended headers in the order the opcode table gives (spec order). */
static uint8_t *put_ext(uint8_t *q, uint32_t h, const struct kite_roce_pkt *p)
{
    if (h & KITE_HDR_DETH) {
        st32(q, p->deth_qkey);
        q[4] = 0;
        st24(q + 5, p->deth_sqpn & KITE_QPN_MASK);
        q += KITE_DETH_LEN;
    }
    if (h & KITE_HDR_RETH) {
        st64(q, p->reth_va);
        st32(q + 8, p->reth_rkey);
        st32(q + 12, p->reth_len);
        q += KITE_RETH_LEN;
    }
    if (h & KITE_HDR_ATOMIC_ETH) {
        st64(q, p->atomic_va);
        st32(q + 8, p->atomic_rkey);
        st64(q + 12, p->atomic_swap_add);
        st64(q + 20, p->atomic_compare);
        q += KITE_ATOMIC_ETH_LEN;
    }
    if (h & KITE_HDR_AETH) {
        q[0] = p->aeth_syndrome;
        st24(q + 1, p->aeth_msn & KITE_PSN_MASK);
        q += KITE_AETH_LEN;
    }
    if (h & KITE_HDR_ATOMIC_ACK_ETH) {
        st64(q, p->atomic_orig);
        q += KITE_ATOMIC_ACK_ETH_LEN;
    }
    if (h & KITE_HDR_IMMDT) {
        memcpy(q, p->imm, KITE_IMMDT_LEN);
        q += KITE_IMMDT_LEN;
    }
    if (h & KITE_HDR_IETH) {
        st32(q, p->ieth_rkey);
        q += KITE_IETH_LEN;
    }
    return q;
}

static const uint8_t *get_ext(const uint8_t *q, uint32_t h,
                              struct kite_roce_pkt *p)
{
    if (h & KITE_HDR_DETH) {
        p->deth_qkey = ld32(q);
        p->deth_sqpn = ld24(q + 5);
        q += KITE_DETH_LEN;
    }
    if (h & KITE_HDR_RETH) {
        p->reth_va = ld64(q);
        p->reth_rkey = ld32(q + 8);
        p->reth_len = ld32(q + 12);
        q += KITE_RETH_LEN;
    }
    if (h & KITE_HDR_ATOMIC_ETH) {
        p->atomic_va = ld64(q);
        p->atomic_rkey = ld32(q + 8);
        p->atomic_swap_add = ld64(q + 12);
        p->atomic_compare = ld64(q + 20);
        q += KITE_ATOMIC_ETH_LEN;
    }
    if (h & KITE_HDR_AETH) {
        p->aeth_syndrome = q[0];
        p->aeth_msn = ld24(q + 1);
        q += KITE_AETH_LEN;
    }
    if (h & KITE_HDR_ATOMIC_ACK_ETH) {
        p->atomic_orig = ld64(q);
        q += KITE_ATOMIC_ACK_ETH_LEN;
    }
    if (h & KITE_HDR_IMMDT) {
        memcpy(p->imm, q, KITE_IMMDT_LEN);
        q += KITE_IMMDT_LEN;
    }
    if (h & KITE_HDR_IETH) {
        p->ieth_rkey = ld32(q);
        q += KITE_IETH_LEN;
    }
    return q;
}

size_t kite_roce_payload_offset(const struct kite_roce_pkt *p)
{
    return KITE_ETH_HLEN +
           (p->ipv6 ? KITE_IPV6_HDR_LEN : KITE_IPV4_HDR_LEN) +
           KITE_UDP_HDR_LEN + KITE_BTH_LEN + kite_roce_op_ext_len(p->opcode);
}

/*
 * The headers of @p (everything before the payload) into @frame: returns
 * the payload offset, 0 when kite_roce_build() would fail (except for a
 * missing p->payload, which only it checks).
 */
static size_t build_hdr(uint8_t *frame, size_t cap,
                        const struct kite_roce_pkt *p)
{
    uint32_t h = op_lookup(p->opcode);
    uint32_t iplen = p->ipv6 ? KITE_IPV6_HDR_LEN : KITE_IPV4_HDR_LEN;
    uint32_t pad, udplen;
    size_t total;
    uint8_t *ip, *q;

    if (!(h & KITE_OPF_VALID)) {
        return 0;
    }
    /* Payload only where the opcode allows it; the wire lengths are 16 bit. */
    if (p->paylen && !(h & KITE_OPF_PAYLOAD)) {
        return 0;
    }
    if (p->paylen > 0xffff) {
        return 0;
    }
    pad = (0u - p->paylen) & 3;
    udplen = KITE_UDP_HDR_LEN + KITE_BTH_LEN + kite_roce_op_ext_len(p->opcode)
             + p->paylen + pad + KITE_ICRC_LEN;
    if (udplen + iplen > 0xffff) {
        return 0;
    }
    total = KITE_ETH_HLEN + iplen + udplen;
    if (total > cap) {
        return 0;
    }

    memcpy(frame, p->dmac, 6);
    memcpy(frame + 6, p->smac, 6);
    st16(frame + 12, p->ipv6 ? KITE_ETH_P_IPV6 : KITE_ETH_P_IPV4);

    ip = frame + KITE_ETH_HLEN;
    if (p->ipv6) {
        uint32_t fl = p->flow_label & KITE_AV_FLOW_LABEL_MASK;

        st32(ip, 6u << 28 | (uint32_t)p->traffic_class << 20 | fl);
        st16(ip + 4, (uint16_t)udplen);
        ip[6] = IP_PROTO_UDP;
        ip[7] = p->hop_limit;
        memcpy(ip + 8, p->sgid, 16);
        memcpy(ip + 24, p->dgid, 16);
    } else {
        ip[0] = IPV4_DEFAULT_HDR;
        ip[1] = p->traffic_class;
        st16(ip + 2, (uint16_t)(iplen + udplen));
        st16(ip + 4, p->ip_id);
        st16(ip + 6, IPV4_FLAG_DF);
        ip[8] = p->hop_limit;
        ip[9] = IP_PROTO_UDP;
        memcpy(ip + 12, p->sgid + 12, 4);
        memcpy(ip + 16, p->dgid + 12, 4);
        /*
         * The checksum from the values, not from the bytes just stored
         * (reading those back stalls on store forwarding).
         */
        st16(ip + 10, csum_fold((uint32_t)(IPV4_DEFAULT_HDR << 8 |
                                           p->traffic_class) +
                                (iplen + udplen) + p->ip_id + IPV4_FLAG_DF +
                                (uint32_t)(p->hop_limit << 8 | IP_PROTO_UDP) +
                                ld16(p->sgid + 12) + ld16(p->sgid + 14) +
                                ld16(p->dgid + 12) + ld16(p->dgid + 14)));
    }

    q = ip + iplen;
    st16(q, p->sport);
    st16(q + 2, KITE_ROCE_UDP_DPORT);
    st16(q + 4, (uint16_t)udplen);
    st16(q + 6, 0);
    q += KITE_UDP_HDR_LEN;

    q[0] = p->opcode;
    q[1] = (uint8_t)((p->se ? 0x80 : 0) | (p->mig ? 0x40 : 0) |
                     pad << BTH_PAD_SHIFT);
    st16(q + 2, p->pkey);
    q[4] = (uint8_t)((p->fecn ? 0x80 : 0) | (p->becn ? 0x40 : 0));
    st24(q + 5, p->dqpn & KITE_QPN_MASK);
    q[8] = p->ackreq ? 0x80 : 0;
    st24(q + 9, p->psn & KITE_PSN_MASK);
    q += KITE_BTH_LEN;

    q = put_ext(q, h, p);
    return (size_t)(q - frame);
}

/* The length of the frame of @p, whose headers build_hdr() wrote. */
static size_t frame_len(const uint8_t *frame, const struct kite_roce_pkt *p)
{
    const uint8_t *ip = frame + KITE_ETH_HLEN;

    return KITE_ETH_HLEN + (p->ipv6 ? KITE_IPV6_HDR_LEN + ld16(ip + 4) :
                            ld16(ip + 2));
}

size_t kite_roce_build(uint8_t *frame, size_t cap,
                       const struct kite_roce_pkt *p)
{
    size_t off, total;
    uint8_t *q;

    if (p->paylen && !p->payload) {
        return 0;
    }
    off = build_hdr(frame, cap, p);
    if (!off) {
        return 0;
    }
    total = frame_len(frame, p);
    q = frame + off;
    if (p->paylen && p->payload != q) {
        memcpy(q, p->payload, p->paylen);
    }
    q += p->paylen;
    memset(q, 0, total - KITE_ICRC_LEN - (size_t)(q - frame));
    q = frame + total - KITE_ICRC_LEN;
    st32le(q, kite_roce_icrc(frame + KITE_ETH_HLEN,
                             (size_t)(q - frame) - KITE_ETH_HLEN));
    return total;
}

/*
 * The raw ICRC state over the @len (KITE_IPV4_HDR_LEN + KITE_UDP_HDR_LEN +
 * KITE_BTH_LEN .. ICRC_HDR_MAX) masked header bytes at @ip. Zero bytes in
 * front of data leave a zero CRC state as it is, and a state meets the
 * first four bytes by XOR: so the headers are CRCed from state 0 as the
 * end of a block long enough for the carry-less path, the seed XORed in.
 */
static uint32_t icrc_hdr_state(const uint8_t *ip, size_t len)
{
    /* Room for the mask's whole width after the headers: one vector OR. */
    static const uint8_t zero[ICRC_HDR_MAX + KITE_ROCE_CRC_FIRST_LEN];
    uint8_t buf[sizeof(zero)];
    const uint8_t *mask = (ip[0] >> 4) == 6 ? icrc_mask_v6 : icrc_mask_v4;
    size_t n = len <= KITE_ROCE_CRC_FIRST_LEN ? KITE_ROCE_CRC_FIRST_LEN :
               ICRC_HDR_MAX;
    uint8_t *h = buf + n - len;
    size_t i;

    /* Copied, not memset(): see kite_roce_pkt_zero. */
    memcpy(buf, zero, sizeof(buf));
    memcpy(h, ip, len);
    for (i = 0; i < KITE_ROCE_CRC_FIRST_LEN; i++) {
        h[i] |= mask[i];
    }
    st32le(h, ld32le(h) ^ ICRC_SEED);
    return kite_roce_crc32(0, buf, n);
}

size_t kite_roce_build_hdr(uint8_t *frame, size_t cap,
                           const struct kite_roce_pkt *p, uint32_t *crc)
{
    size_t off = build_hdr(frame, cap, p);

    if (off) {
        *crc = icrc_hdr_state(frame + KITE_ETH_HLEN, off - KITE_ETH_HLEN);
    }
    return off;
}

size_t kite_roce_build_end(uint8_t *frame, const struct kite_roce_pkt *p,
                           uint32_t crc)
{
    size_t total = frame_len(frame, p);
    uint8_t *q = frame + kite_roce_payload_offset(p) + p->paylen;
    size_t pad = total - KITE_ICRC_LEN - (size_t)(q - frame);

    memset(q, 0, pad);
    crc = kite_roce_crc32(crc, q, pad);
    st32le(q + pad, ~crc);
    return total;
}

/* ---- parse ---- */

const struct kite_roce_pkt kite_roce_pkt_zero;

/* Ethernet, IP and UDP fields of @p from a frame whose IP header is sane. */
static void fill_l3(struct kite_roce_pkt *p, const uint8_t *frame,
                    uint32_t iplen)
{
    const uint8_t *ip = frame + KITE_ETH_HLEN;

    memcpy(p->dmac, frame, 6);
    memcpy(p->smac, frame + 6, 6);
    if (iplen == KITE_IPV6_HDR_LEN) {
        uint32_t w = ld32(ip);

        p->ipv6 = true;
        p->traffic_class = (uint8_t)(w >> 20);
        p->flow_label = w & KITE_AV_FLOW_LABEL_MASK;
        p->hop_limit = ip[7];
        memcpy(p->sgid, ip + 8, 16);
        memcpy(p->dgid, ip + 24, 16);
    } else {
        p->traffic_class = ip[1];
        p->ip_id = ld16(ip + 4);
        p->hop_limit = ip[8];
        /* IPv4-mapped GIDs, ::ffff:a.b.c.d */
        p->sgid[10] = p->sgid[11] = 0xff;
        p->dgid[10] = p->dgid[11] = 0xff;
        memcpy(p->sgid + 12, ip + 12, 4);
        memcpy(p->dgid + 12, ip + 16, 4);
    }
    p->sport = ld16(ip + iplen);
    p->dport = KITE_ROCE_UDP_DPORT;
    p->l3 = ip;
    p->l3_len = iplen;
}

/*
 * Whether @frame is RoCEv2: IPv4 without options or fragments, or IPv6
 * with UDP as next header, and UDP to port 4791. true: *@iplen is the IP
 * header's length and *@l3total the IP packet's length as the header
 * says (unchecked).
 */
static bool roce_locate(const uint8_t *frame, size_t len, uint32_t *iplen,
                        uint32_t *l3total)
{
    const uint8_t *ip;
    uint16_t ethertype;

    if (len < KITE_ETH_HLEN) {
        return false;
    }
    ethertype = ld16(frame + 12);
    ip = frame + KITE_ETH_HLEN;
    len -= KITE_ETH_HLEN;

    /*
     * Until UDP port 4791 is seen the frame may be anything the host's
     * stack wants (fragments, options, extension headers): NOT_ROCE.
     */
    if (ethertype == KITE_ETH_P_IPV4) {
        *iplen = KITE_IPV4_HDR_LEN;
        if (len < *iplen + KITE_UDP_HDR_LEN || ip[0] != IPV4_DEFAULT_HDR ||
            ip[9] != IP_PROTO_UDP || (ld16(ip + 6) & IPV4_FRAG_MASK)) {
            return false;
        }
        *l3total = ld16(ip + 2);
    } else if (ethertype == KITE_ETH_P_IPV6) {
        *iplen = KITE_IPV6_HDR_LEN;
        if (len < *iplen + KITE_UDP_HDR_LEN || (ip[0] >> 4) != 6 ||
            ip[6] != IP_PROTO_UDP) {
            return false;
        }
        *l3total = *iplen + ld16(ip + 4);
    } else {
        return false;
    }
    return ld16(ip + *iplen + 2) == KITE_ROCE_UDP_DPORT;
}

static uint32_t bth_dqpn(const uint8_t *bth)
{
    return ld24(bth + 5);
}

static uint32_t bth_psn(const uint8_t *bth)
{
    return ld24(bth + 9);
}

bool kite_roce_frame_peek(const uint8_t *frame, size_t len,
                          struct kite_roce_frame_info *fi)
{
    uint32_t iplen, l3total;
    size_t bth;

    memset(fi, 0, sizeof(*fi));
    if (!roce_locate(frame, len, &iplen, &l3total)) {
        return false;
    }
    if (iplen == KITE_IPV6_HDR_LEN) {
        memcpy(fi->dgid, frame + KITE_ETH_HLEN + 24, 16);
    } else {
        fi->dgid[10] = fi->dgid[11] = 0xff;
        memcpy(fi->dgid + 12, frame + KITE_ETH_HLEN + 16, 4);
    }
    bth = KITE_ETH_HLEN + iplen + KITE_UDP_HDR_LEN;
    if (len >= bth + KITE_BTH_LEN) {
        fi->opcode = frame[bth];
        fi->dqpn = bth_dqpn(frame + bth);
        fi->psn = bth_psn(frame + bth);
    }
    return true;
}

enum kite_roce_parse_result kite_roce_parse(const uint8_t *frame, size_t len,
                                            struct kite_roce_pkt *p)
{
    const uint8_t *ip, *udp, *bth, *q;
    uint32_t iplen, l3total, udplen, h, ext, body, pad;

    *p = kite_roce_pkt_zero;
    if (!roce_locate(frame, len, &iplen, &l3total)) {
        return KITE_ROCE_NOT_ROCE;
    }
    ip = frame + KITE_ETH_HLEN;
    len -= KITE_ETH_HLEN;
    udp = ip + iplen;

    /*
     * RoCEv2 from here on: every inconsistency is MALFORMED. The addresses
     * are filled first so the caller can tell whether a bad frame was for
     * this port.
     */
    fill_l3(p, frame, iplen);
    udplen = ld16(udp + 4);
    if (l3total > len || l3total < iplen || udplen != l3total - iplen ||
        udplen < KITE_UDP_HDR_LEN + KITE_BTH_LEN + KITE_ICRC_LEN) {
        return KITE_ROCE_MALFORMED;
    }
    if (iplen == KITE_IPV4_HDR_LEN && ipv4_csum(ip) != 0) {
        return KITE_ROCE_MALFORMED;
    }
    bth = udp + KITE_UDP_HDR_LEN;
    if (bth[1] & BTH_TVER_MASK) {
        return KITE_ROCE_MALFORMED;
    }
    h = op_lookup(bth[0]);
    if (!(h & KITE_OPF_VALID)) {
        return KITE_ROCE_MALFORMED;
    }
    ext = kite_roce_op_ext_len(bth[0]);
    if (udplen < KITE_UDP_HDR_LEN + KITE_BTH_LEN + ext + KITE_ICRC_LEN) {
        return KITE_ROCE_MALFORMED;
    }
    /* Payload plus pad. */
    body = udplen - (KITE_UDP_HDR_LEN + KITE_BTH_LEN + ext + KITE_ICRC_LEN);
    pad = (bth[1] >> BTH_PAD_SHIFT) & 3;
    if (pad > body || (body && !(h & KITE_OPF_PAYLOAD))) {
        return KITE_ROCE_MALFORMED;
    }
    if (kite_roce_icrc(ip, l3total - KITE_ICRC_LEN) !=
        ld32le(ip + l3total - KITE_ICRC_LEN)) {
        return KITE_ROCE_BAD_ICRC;
    }

    p->opcode = bth[0];
    p->se = bth[1] & 0x80;
    p->mig = bth[1] & 0x40;
    p->tver = 0;
    p->pkey = ld16(bth + 2);
    p->fecn = bth[4] & 0x80;
    p->becn = bth[4] & 0x40;
    p->dqpn = bth_dqpn(bth);
    p->ackreq = bth[8] & 0x80;
    p->psn = bth_psn(bth);

    q = get_ext(bth + KITE_BTH_LEN, h, p);
    p->payload = q;
    p->paylen = body - pad;
    return KITE_ROCE_OK;
}

/* ---- flows and segmentation ---- */

uint16_t kite_roce_udp_sport(uint32_t lqpn, uint32_t rqpn,
                             uint32_t flow_label)
{
    uint32_t fl = flow_label & KITE_AV_FLOW_LABEL_MASK;

    if (!fl) {
        uint64_t v = (uint64_t)lqpn * rqpn;

        v ^= v >> 20;
        v ^= v >> 40;
        fl = (uint32_t)v & KITE_AV_FLOW_LABEL_MASK;
    }
    return (uint16_t)(((fl & 0x3fff) ^ ((fl & 0xfc000) >> 14)) | 0xc000);
}

uint8_t kite_roce_seg_opcode(uint8_t first_op, bool imm, uint32_t i,
                             uint32_t n)
{
    uint8_t t = KITE_BTH_TRANSPORT(first_op);
    uint8_t k = first_op & 0x1f;
    uint8_t op;

    if (i >= n) {
        return KITE_ROCE_OP_INVALID;
    }
    if (k <= KITE_OP_SEND_ONLY_IMM) {
        if (n == 1) {
            op = imm ? KITE_OP_SEND_ONLY_IMM : KITE_OP_SEND_ONLY;
        } else if (i == 0) {
            op = KITE_OP_SEND_FIRST;
        } else if (i == n - 1) {
            op = imm ? KITE_OP_SEND_LAST_IMM : KITE_OP_SEND_LAST;
        } else {
            op = KITE_OP_SEND_MIDDLE;
        }
    } else if (k <= KITE_OP_WRITE_ONLY_IMM) {
        if (n == 1) {
            op = imm ? KITE_OP_WRITE_ONLY_IMM : KITE_OP_WRITE_ONLY;
        } else if (i == 0) {
            op = KITE_OP_WRITE_FIRST;
        } else if (i == n - 1) {
            op = imm ? KITE_OP_WRITE_LAST_IMM : KITE_OP_WRITE_LAST;
        } else {
            op = KITE_OP_WRITE_MIDDLE;
        }
    } else if (k >= KITE_OP_READ_RESP_FIRST && k <= KITE_OP_READ_RESP_ONLY) {
        /* Read responses carry no immediate: @imm is ignored. */
        if (n == 1) {
            op = KITE_OP_READ_RESP_ONLY;
        } else if (i == 0) {
            op = KITE_OP_READ_RESP_FIRST;
        } else if (i == n - 1) {
            op = KITE_OP_READ_RESP_LAST;
        } else {
            op = KITE_OP_READ_RESP_MIDDLE;
        }
    } else {
        return KITE_ROCE_OP_INVALID;
    }
    op |= t;
    /* e.g. a UC read response or a multi-packet UD send */
    return (op_lookup(op) & KITE_OPF_VALID) ? op : KITE_ROCE_OP_INVALID;
}
