/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 engine: frame build and parse, ICRC, PSN arithmetic and
 * segmentation. Wire facts: Documentation/kite/model.rst and the sources it
 * names (InfiniBand Annex A17, Linux rxe, Wireshark's dissector).
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef KITE_ROCE_PKT_H
#define KITE_ROCE_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kite/kite_hw.h"

#define KITE_ROCE_UDP_DPORT     4791
#define KITE_ETH_P_IPV4         0x0800
#define KITE_ETH_P_IPV6         0x86dd

#define KITE_IPV4_HDR_LEN       20
#define KITE_IPV6_HDR_LEN       40
#define KITE_UDP_HDR_LEN        8
#define KITE_BTH_LEN            12
#define KITE_RETH_LEN           16
#define KITE_AETH_LEN           4
#define KITE_ATOMIC_ETH_LEN     28
#define KITE_ATOMIC_ACK_ETH_LEN 8
#define KITE_IMMDT_LEN          4
#define KITE_DETH_LEN           8
#define KITE_IETH_LEN           4
#define KITE_ICRC_LEN           4
/* Largest header stack before the payload (Eth + IPv6 + UDP + BTH + ...). */
#define KITE_ROCE_MAX_HDR_LEN   (KITE_ETH_HLEN + KITE_IPV6_HDR_LEN + \
                                 KITE_UDP_HDR_LEN + KITE_BTH_LEN + \
                                 KITE_ATOMIC_ETH_LEN + KITE_DETH_LEN)
/* Largest payload of one packet: the largest path MTU, KITE_MTU_4096. */
#define KITE_ROCE_MAX_PAYLOAD   4096
/* Largest frame the engine builds: the largest payload, pad and ICRC. */
#define KITE_ROCE_MAX_FRAME     (KITE_ROCE_MAX_HDR_LEN + \
                                 KITE_ROCE_MAX_PAYLOAD + 3 + KITE_ICRC_LEN)

#define KITE_BTH_PKEY_DEFAULT   0xffff
#define KITE_GSI_QKEY           0x80010000u

/* BTH opcodes: transport in bits 7:5, operation in bits 4:0. */
#define KITE_BTH_TRANSPORT(op)  ((op) & 0xe0)
#define KITE_BTH_RC             0x00
#define KITE_BTH_UC             0x20
#define KITE_BTH_UD             0x60

enum kite_bth_op {
    KITE_OP_SEND_FIRST = 0x00,
    KITE_OP_SEND_MIDDLE = 0x01,
    KITE_OP_SEND_LAST = 0x02,
    KITE_OP_SEND_LAST_IMM = 0x03,
    KITE_OP_SEND_ONLY = 0x04,
    KITE_OP_SEND_ONLY_IMM = 0x05,
    KITE_OP_WRITE_FIRST = 0x06,
    KITE_OP_WRITE_MIDDLE = 0x07,
    KITE_OP_WRITE_LAST = 0x08,
    KITE_OP_WRITE_LAST_IMM = 0x09,
    KITE_OP_WRITE_ONLY = 0x0a,
    KITE_OP_WRITE_ONLY_IMM = 0x0b,
    KITE_OP_READ_REQ = 0x0c,
    KITE_OP_READ_RESP_FIRST = 0x0d,
    KITE_OP_READ_RESP_MIDDLE = 0x0e,
    KITE_OP_READ_RESP_LAST = 0x0f,
    KITE_OP_READ_RESP_ONLY = 0x10,
    KITE_OP_ACK = 0x11,
    KITE_OP_ATOMIC_ACK = 0x12,
    KITE_OP_CMP_SWP = 0x13,
    KITE_OP_FETCH_ADD = 0x14,
    KITE_OP_SEND_LAST_INV = 0x16,
    KITE_OP_SEND_ONLY_INV = 0x17,
    /* UD: KITE_BTH_UD | SEND_ONLY(_IMM) */
    KITE_OP_UD_SEND_ONLY = 0x64,
    KITE_OP_UD_SEND_ONLY_IMM = 0x65,
};

/* Extended headers an opcode carries (kite_roce_op_hdrs()). */
#define KITE_HDR_RETH           (1u << 0)
#define KITE_HDR_AETH           (1u << 1)
#define KITE_HDR_ATOMIC_ETH     (1u << 2)
#define KITE_HDR_ATOMIC_ACK_ETH (1u << 3)
#define KITE_HDR_IMMDT          (1u << 4)
#define KITE_HDR_DETH           (1u << 5)
#define KITE_HDR_IETH           (1u << 6)
/* Opcode properties. */
#define KITE_OPF_VALID          (1u << 16)  /* the engine knows the opcode */
#define KITE_OPF_PAYLOAD        (1u << 17)  /* may carry payload */
#define KITE_OPF_REQUEST        (1u << 18)  /* requester -> responder */
#define KITE_OPF_FIRST          (1u << 19)  /* FIRST or ONLY */
#define KITE_OPF_LAST           (1u << 20)  /* LAST or ONLY */
/*
 * Single-packet opcodes (READ_REQ, atomics, ACK, ATOMIC_ACK) are whole
 * messages: they carry both FIRST and LAST.
 */

/* Not a BTH opcode the engine knows: kite_roce_seg_opcode()'s error value. */
#define KITE_ROCE_OP_INVALID    0xff

/* AETH syndromes. */
#define KITE_AETH_ACK_UNLIMITED 0x1f        /* ACK, no credit count */
#define KITE_AETH_RNR_NAK       0x20        /* | timer code */
#define KITE_AETH_NAK_PSN_SEQ   0x60
#define KITE_AETH_NAK_INV_REQ   0x61
#define KITE_AETH_NAK_REM_ACC   0x62
#define KITE_AETH_NAK_REM_OP    0x63
#define KITE_AETH_TYPE(syn)     ((syn) & 0x60)
#define KITE_AETH_TYPE_ACK      0x00
#define KITE_AETH_TYPE_RNR      0x20
#define KITE_AETH_TYPE_NAK      0x60

/*
 * One RoCEv2 packet in host order: what kite_roce_build() writes and
 * kite_roce_parse() fills. Fields of headers the opcode does not carry are
 * ignored when building and left 0 when parsing.
 */
struct kite_roce_pkt {
    /* Ethernet */
    uint8_t dmac[6];
    uint8_t smac[6];
    /* IP: GIDs (IPv4-mapped ::ffff:a.b.c.d for IPv4) */
    bool ipv6;
    uint8_t sgid[16];
    uint8_t dgid[16];
    uint8_t traffic_class;      /* IPv4 TOS / IPv6 traffic class */
    uint8_t hop_limit;          /* IPv4 TTL / IPv6 hop limit */
    uint32_t flow_label;        /* IPv6 only, 20 bits */
    uint16_t ip_id;             /* IPv4 identification */
    /* UDP */
    uint16_t sport;
    uint16_t dport;             /* parse only: build always uses 4791 */
    /* BTH */
    uint8_t opcode;
    bool se;
    bool mig;
    bool ackreq;
    uint8_t tver;               /* parse only; build writes 0 */
    uint16_t pkey;
    bool fecn, becn;
    uint32_t dqpn;
    uint32_t psn;
    /* RETH */
    uint64_t reth_va;
    uint32_t reth_rkey;
    uint32_t reth_len;
    /* AETH */
    uint8_t aeth_syndrome;
    uint32_t aeth_msn;
    /* AtomicETH */
    uint64_t atomic_va;
    uint32_t atomic_rkey;
    uint64_t atomic_swap_add;
    uint64_t atomic_compare;
    /* AtomicAckETH */
    uint64_t atomic_orig;
    /* ImmDt: the 4 wire bytes, kept in wire order (the __be32 of verbs) */
    uint8_t imm[4];
    /* DETH */
    uint32_t deth_qkey;
    uint32_t deth_sqpn;
    /* IETH */
    uint32_t ieth_rkey;
    /* Payload (without pad); parse points into the frame. */
    const uint8_t *payload;
    uint32_t paylen;
    /* Parse only: the IP header as received (UD GRH area). */
    const uint8_t *l3;
    uint32_t l3_len;
};

/*
 * An all-zero packet. Clearing a packet by copying it, rather than with
 * memset(), lets compilers use vector stores: they expand a memset() of
 * this size into rep stos, which is slow to start on current x86 CPUs and
 * was a visible part of every packet's cost.
 */
extern const struct kite_roce_pkt kite_roce_pkt_zero;

enum kite_roce_parse_result {
    KITE_ROCE_OK = 0,
    KITE_ROCE_NOT_ROCE,         /* not IPv4/IPv6 + UDP to port 4791 */
    KITE_ROCE_MALFORMED,        /* lengths, header, opcode, TVer, pad */
    KITE_ROCE_BAD_ICRC,
};

/* Properties of BTH opcode @op: KITE_HDR_* | KITE_OPF_*; 0 if unknown. */
uint32_t kite_roce_op_hdrs(uint8_t op);
/* Bytes of the extended headers @op carries. */
uint32_t kite_roce_op_ext_len(uint8_t op);

/*
 * Build the frame for @p into @frame (@cap bytes): Ethernet, IPv4 (DF, no
 * options, valid checksum) or IPv6, UDP (checksum 0), BTH, the extended
 * headers of p->opcode, the payload, PadCnt zero bytes and the ICRC.
 * Returns the frame length, 0 when @cap is too small, the opcode is
 * unknown, or p->paylen is non-zero for an opcode without payload.
 * p->payload is either outside @frame or exactly at
 * @frame + kite_roce_payload_offset(@p), where it is used in place
 * (the caller read the data straight into the frame: no copy).
 */
size_t kite_roce_build(uint8_t *frame, size_t cap,
                       const struct kite_roce_pkt *p);

/*
 * kite_roce_build() in two halves, for a caller that CRCs the payload as
 * it reads it into the frame: kite_roce_build_hdr() writes the headers of
 * @p (p->paylen set, p->payload not needed) and sets @crc to the raw
 * ICRC state over them (kite_roce_crc32()); it returns the payload
 * offset, or 0 where kite_roce_build() fails. Once p->paylen bytes of
 * payload are there and @crc is the state over them too,
 * kite_roce_build_end() writes the pad and the ICRC and returns the
 * frame length.
 */
size_t kite_roce_build_hdr(uint8_t *frame, size_t cap,
                           const struct kite_roce_pkt *p, uint32_t *crc);
size_t kite_roce_build_end(uint8_t *frame, const struct kite_roce_pkt *p,
                           uint32_t crc);

/* Where kite_roce_build() puts the payload of @p in the frame. */
size_t kite_roce_payload_offset(const struct kite_roce_pkt *p);

/*
 * Parse and check @frame. KITE_ROCE_OK fills @p (payload/l3 point into
 * @frame). The UDP length, not the frame length, bounds the packet.
 * Besides the checks its result names, MALFORMED also covers a bad IPv4
 * header checksum and payload (or pad) on an opcode that carries none.
 * NOT_ROCE leaves @p zeroed. MALFORMED and BAD_ICRC fill only the Ethernet,
 * IP and UDP fields (dmac, smac, ipv6, GIDs, traffic_class, hop_limit,
 * flow_label, ip_id, sport, dport, l3, l3_len; unverified) so the caller
 * can tell whether the frame was addressed to it; the rest stays 0.
 */
enum kite_roce_parse_result kite_roce_parse(const uint8_t *frame, size_t len,
                                            struct kite_roce_pkt *p);

/*
 * ICRC of the RoCEv2 packet whose IP header starts at @ip and which is
 * @len bytes long up to (not including) the ICRC, with the invariant-field
 * masking of Annex A17. The value as a CPU integer; it goes on the wire
 * least-significant byte first.
 */
uint32_t kite_roce_icrc(const uint8_t *ip, size_t len);

/* RoCEv2 UDP source port for a flow (ib_core's rdma_get_udp_sport rule). */
uint16_t kite_roce_udp_sport(uint32_t lqpn, uint32_t rqpn,
                             uint32_t flow_label);

/* 24-bit PSN arithmetic. */
static inline uint32_t kite_psn_add(uint32_t psn, uint32_t n)
{
    return (psn + n) & KITE_PSN_MASK;
}

/* <0, 0, >0 as @a is before, equal to, after @b (within 2^23). */
static inline int32_t kite_psn_cmp(uint32_t a, uint32_t b)
{
    return (int32_t)((a - b) << 8);
}

/* Packets a message of @len bytes takes at path MTU @mtu bytes (>= 1). */
static inline uint32_t kite_roce_npkts(uint64_t len, uint32_t mtu)
{
    return len ? (uint32_t)((len + mtu - 1) / mtu) : 1;
}

/*
 * BTH opcode of packet @i (0-based) of @n of a message of kind @first_op
 * (KITE_OP_SEND_FIRST or KITE_OP_WRITE_FIRST or KITE_OP_READ_RESP_FIRST,
 * OR'ed with the transport), with immediate data when @imm: ONLY when
 * n == 1, else FIRST, MIDDLE..., LAST. Any opcode of the kind is accepted
 * as @first_op; @imm is ignored for read responses. KITE_ROCE_OP_INVALID
 * when @i >= @n or the result is not a valid opcode (a UC read response,
 * a multi-packet UD send).
 */
uint8_t kite_roce_seg_opcode(uint8_t first_op, bool imm, uint32_t i,
                             uint32_t n);

#endif
