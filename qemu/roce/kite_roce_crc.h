/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 engine: CRC-32 with the reflected Ethernet polynomial (the
 * ICRC's), by slicing tables on any CPU or by carry-less multiplication
 * (PCLMULQDQ, or VPCLMULQDQ with AVX2) on x86-64. The implementation is
 * chosen once, on first use, from the CPU's features; tests may force one.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef KITE_ROCE_CRC_H
#define KITE_ROCE_CRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum kite_roce_crc_impl {
    KITE_ROCE_CRC_AUTO,         /* the fastest the CPU has */
    KITE_ROCE_CRC_TABLE,        /* slicing by 16: any CPU */
    KITE_ROCE_CRC_CLMUL,        /* x86-64 PCLMULQDQ folding */
    KITE_ROCE_CRC_VCLMUL,       /* x86-64 VPCLMULQDQ (AVX2) folding */
};

/* The bytes at the start of the data kite_roce_crc32_or() masks. */
#define KITE_ROCE_CRC_FIRST_LEN 64

/*
 * Raw CRC-32 update of state @crc over @len bytes at @p: no inversion
 * before or after (the caller holds the state), any length and alignment.
 */
uint32_t kite_roce_crc32(uint32_t crc, const uint8_t *p, size_t len);

/*
 * The same over @len >= KITE_ROCE_CRC_FIRST_LEN bytes at @p as if each of
 * the first KITE_ROCE_CRC_FIRST_LEN bytes were OR'ed with the byte of
 * @or at the same offset (the ICRC's fields masked to ones), without
 * changing or copying the data.
 */
uint32_t kite_roce_crc32_or(uint32_t crc, const uint8_t *p, size_t len,
                            const uint8_t *or);

/*
 * kite_roce_crc32() over the @len bytes at @src while copying them to
 * @dst (which must not overlap @src): with VPCLMULQDQ each byte is loaded
 * once, for the copy and the CRC together; else a copy, then the CRC.
 */
uint32_t kite_roce_crc32_copy(uint32_t crc, uint8_t *dst, const uint8_t *src,
                              size_t len);

/*
 * Use @impl from now on. false (and no change) when this CPU or build
 * does not have it. KITE_ROCE_CRC_AUTO picks what first use would pick.
 */
bool kite_roce_crc_select(enum kite_roce_crc_impl impl);

/* The implementation in use (never KITE_ROCE_CRC_AUTO once selected). */
enum kite_roce_crc_impl kite_roce_crc_current(void);

#endif
