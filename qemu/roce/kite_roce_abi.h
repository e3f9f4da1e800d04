/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 engine: loads and stores of the little-endian fields
 * (__le16, __le32, __le64) of the device ABI's structures in
 * include/kite/kite_hw.h, for code that has no le32_to_cpu(): the engine,
 * which builds both inside QEMU and on the host, and its host test
 * harness. They go byte by byte, so they are right on any host byte order
 * and at any alignment; each takes a pointer to the field itself, so the
 * compiler checks that the width matches.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef KITE_ROCE_ABI_H
#define KITE_ROCE_ABI_H

#include <stdint.h>

#include "kite/kite_hw.h"

static inline uint16_t kr_le16(const __le16 *f)
{
    const uint8_t *p = (const uint8_t *)f;

    return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t kr_le32(const __le32 *f)
{
    const uint8_t *p = (const uint8_t *)f;

    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static inline uint64_t kr_le64(const __le64 *f)
{
    const uint8_t *p = (const uint8_t *)f;
    uint64_t v = 0;
    int i;

    for (i = 7; i >= 0; i--) {
        v = v << 8 | p[i];
    }
    return v;
}

static inline void kr_set_le16(__le16 *f, uint16_t v)
{
    uint8_t *p = (uint8_t *)f;

    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void kr_set_le32(__le32 *f, uint32_t v)
{
    uint8_t *p = (uint8_t *)f;
    int i;

    for (i = 0; i < 4; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

static inline void kr_set_le64(__le64 *f, uint64_t v)
{
    uint8_t *p = (uint8_t *)f;
    int i;

    for (i = 0; i < 8; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

#endif
