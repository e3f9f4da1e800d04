/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared by the frame codec's host tests (test_roce_icrc.c,
 * test_roce_codec.c, test_roce_parse.c): a test vector, a deterministic
 * random source, a byte-wise reference ICRC written independently of the
 * codec, and a plain packet to start from.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef ROCE_FRAMES_H
#define ROCE_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "kite_roce_pkt.h"

/* The Ethernet header's length, as the tests count it themselves. */
#define ETH 14

/* Vector D of roce-facts §4.4: IPv6 RC SEND_ONLY, AckReq, 8-byte payload. */
extern const uint8_t pkt_vec_d[72];

/* xorshift64*: deterministic, so a failure reproduces. */
uint64_t pkt_rnd(void);
uint32_t pkt_rd32le(const uint8_t *p);
/* Ethernet header (dmac b, smac a) + the IP packet @ip; returns the length. */
size_t pkt_eth_wrap(uint8_t *f, const uint8_t *ip, size_t iplen);
/* The ICRC written out the slow way: 8 x FF, masked copy, rest. */
uint32_t pkt_ref_icrc(const uint8_t *ip, size_t len);
void pkt_set_v4_gid(uint8_t *gid, uint8_t a, uint8_t b, uint8_t c,
                    uint8_t d);
/* A plain packet over IPv4, 198.18.0.1 -> 198.18.0.2. */
void pkt_base(struct kite_roce_pkt *p, uint8_t op);
/* kite_roce_build() that must succeed. */
size_t pkt_build_ok(uint8_t *f, size_t cap, const struct kite_roce_pkt *p);

#endif
