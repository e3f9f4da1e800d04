/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared by the frame codec's host tests: see roce_frames.h.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "roce_frames.h"

static const uint8_t mac_a[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
static const uint8_t mac_b[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 };
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

const uint8_t pkt_vec_d[72] = {
    0x60, 0x00, 0x00, 0x00, 0x00, 0x20, 0x11, 0x40, 0xfe, 0x80, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
    0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x02, 0xdf, 0x94, 0x12, 0xb7, 0x00, 0x20, 0x00, 0x00,
    0x04, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x12, 0x80, 0x12, 0x34, 0x56,
    0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x3e, 0xf7, 0x37, 0xc2,
};

uint64_t pkt_rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

uint32_t pkt_rd32le(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

size_t pkt_eth_wrap(uint8_t *f, const uint8_t *ip, size_t iplen)
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

    if (ref_tab[1]) {
        return;
    }
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

uint32_t pkt_ref_icrc(const uint8_t *ip, size_t len)
{
    static const uint8_t ff[8] = {
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
    };
    uint8_t *b = malloc(len + 1);
    size_t l3 = (ip[0] >> 4) == 6 ? 40 : 20;
    uint32_t crc;
    size_t i;

    assert_non_null(b);
    ref_init();
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

void pkt_set_v4_gid(uint8_t *gid, uint8_t a, uint8_t b, uint8_t c,
                    uint8_t d)
{
    memset(gid, 0, 16);
    gid[10] = gid[11] = 0xff;
    gid[12] = a;
    gid[13] = b;
    gid[14] = c;
    gid[15] = d;
}

void pkt_base(struct kite_roce_pkt *p, uint8_t op)
{
    memset(p, 0, sizeof(*p));
    memcpy(p->dmac, mac_b, 6);
    memcpy(p->smac, mac_a, 6);
    pkt_set_v4_gid(p->sgid, 198, 18, 0, 1);
    pkt_set_v4_gid(p->dgid, 198, 18, 0, 2);
    p->hop_limit = 64;
    p->sport = 0xc132;
    p->opcode = op;
    p->pkey = KITE_BTH_PKEY_DEFAULT;
    p->dqpn = 0x102;
    p->psn = 0x10;
}

size_t pkt_build_ok(uint8_t *f, size_t cap, const struct kite_roce_pkt *p)
{
    size_t n = kite_roce_build(f, cap, p);

    assert_true(n > 0);
    return n;
}
