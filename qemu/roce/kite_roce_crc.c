/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 engine: CRC-32, reflected Ethernet polynomial
 * P(x) = x^32 + 0x04c11db7 (bit i = coefficient of x^i), see
 * kite_roce_crc.h.
 *
 * Table: slicing by 16 (16 KiB of tables, built on first use).
 *
 * Carry-less multiplication: in the reflected bit order the first bit of
 * the data is bit 0 of the first byte, so 16 bytes loaded little-endian
 * into a 128-bit register X hold the polynomial sum(X_k x^(127 - k)):
 * the low 64-bit half A holds the higher powers, X = A x^64 + B. Moving X
 * forward by D bits onto data that follows it adds X x^D, and modulo P
 * that is A (x^(D+64) mod P) + B (x^D mod P): two 64x32-bit carry-less
 * products, each of degree below 96, so it fits a 128-bit register and is
 * XORed into the data D bits on. A carry-less product of two reflected
 * 64-bit operands lands one bit short of the reflected 128-bit result (it
 * is 127 bits wide), so each constant is taken one power lower:
 * K(D) = x^(D-1) mod P, reflected into the upper half of a 64-bit word.
 * Four registers fold 64 bytes per step (D = 512), then fold into one
 * (D = 384, 256, 128), which takes the remaining 16-byte blocks. What
 * is left is a 128-bit value congruent to everything consumed: its CRC
 * from state 0 (16 table steps) is the state, and the table finishes the
 * last bytes. The constants are computed here from P, not copied.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <string.h>

#include "kite_roce_crc.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KITE_CRC_HAVE_CLMUL     1
#include <immintrin.h>
#else
#define KITE_CRC_HAVE_CLMUL     0
#endif

#define CRC32_POLY_REFLECTED    0xedb88320u
#define CRC32_POLY_NORMAL       0x04c11db7u
#define CRC_SLICES              16
/*
 * The carry-less paths start on 64 bytes (which may come from a separate
 * copy, kite_roce_crc32_first()); below that the table is as fast.
 */
#define CRC_FIRST_LEN           KITE_ROCE_CRC_FIRST_LEN

static uint32_t crc_tab[CRC_SLICES][256];
static bool crc_tab_ready;
static enum kite_roce_crc_impl crc_impl = KITE_ROCE_CRC_AUTO;

static inline uint32_t ld32le(const uint8_t *p)
{
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 |
           (uint32_t)p[1] << 8 | p[0];
}

/*
 * crc_tab[k][b]: the CRC contribution of byte b followed by k zero bytes,
 * so 16 input bytes take 16 independent lookups. The engine is
 * single-threaded (kite_roce.h); a racing second builder would only store
 * the same values again.
 */
static void crc_tab_init(void)
{
    uint32_t i, k, c;

    for (i = 0; i < 256; i++) {
        c = i;
        for (k = 0; k < 8; k++) {
            c = (c >> 1) ^ (CRC32_POLY_REFLECTED & (0u - (c & 1)));
        }
        crc_tab[0][i] = c;
    }
    for (i = 0; i < 256; i++) {
        c = crc_tab[0][i];
        for (k = 1; k < CRC_SLICES; k++) {
            c = (c >> 8) ^ crc_tab[0][c & 0xff];
            crc_tab[k][i] = c;
        }
    }
    crc_tab_ready = true;
}

/* Four bytes of a little-endian word w, the first one meeting table k. */
#define CRC_WORD(w, k) \
    (crc_tab[(k)][(w) & 0xff] ^ crc_tab[(k) - 1][((w) >> 8) & 0xff] ^ \
     crc_tab[(k) - 2][((w) >> 16) & 0xff] ^ crc_tab[(k) - 3][(w) >> 24])

static uint32_t crc_table_update(uint32_t crc, const uint8_t *p, size_t len)
{
    while (len >= 16) {
        uint32_t w0 = ld32le(p) ^ crc;
        uint32_t w1 = ld32le(p + 4);
        uint32_t w2 = ld32le(p + 8);
        uint32_t w3 = ld32le(p + 12);

        crc = CRC_WORD(w0, 15) ^ CRC_WORD(w1, 11) ^ CRC_WORD(w2, 7) ^
              CRC_WORD(w3, 3);
        p += 16;
        len -= 16;
    }
    while (len--) {
        crc = (crc >> 8) ^ crc_tab[0][(crc ^ *p++) & 0xff];
    }
    return crc;
}

#if KITE_CRC_HAVE_CLMUL

/* Fold distances, in bits, the carry-less paths use. */
#define FOLD_8X                 1024
#define FOLD_4X                 512
#define FOLD_3X                 384
#define FOLD_2X                 256
#define FOLD_1X                 128
#define FOLD_DISTANCES          5

/* Per distance D: { K(D + 64), K(D) } for the low and the high half. */
static uint64_t crc_k[FOLD_DISTANCES][2];

/* x^n mod P, normal bit order. */
static uint32_t crc_xpow_mod(unsigned n)
{
    uint32_t r = 1;

    while (n--) {
        r = (r & 0x80000000u) ? (r << 1) ^ CRC32_POLY_NORMAL : r << 1;
    }
    return r;
}

static uint32_t crc_reflect32(uint32_t v)
{
    uint32_t r = 0;
    int i;

    for (i = 0; i < 32; i++) {
        r |= ((v >> i) & 1) << (31 - i);
    }
    return r;
}

/* K(D) = x^(D-1) mod P as the carry-less operand (see the top). */
static uint64_t crc_fold_const(unsigned d)
{
    return (uint64_t)crc_reflect32(crc_xpow_mod(d - 1)) << 32;
}

static void crc_clmul_init(void)
{
    static const unsigned dist[FOLD_DISTANCES] = {
        FOLD_1X, FOLD_2X, FOLD_3X, FOLD_4X, FOLD_8X
    };
    unsigned i;

    for (i = 0; i < FOLD_DISTANCES; i++) {
        crc_k[i][0] = crc_fold_const(dist[i] + 64);
        crc_k[i][1] = crc_fold_const(dist[i]);
    }
}

static bool crc_clmul_supported(bool wide)
{
    __builtin_cpu_init();
    if (wide) {
        return __builtin_cpu_supports("vpclmulqdq") &&
               __builtin_cpu_supports("avx2") &&
               __builtin_cpu_supports("pclmul");
    }
    return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse2");
}

__attribute__((target("pclmul,sse2")))
static inline __m128i crc_fold(__m128i x, __m128i k)
{
    return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
                         _mm_clmulepi64_si128(x, k, 0x11));
}

__attribute__((target("pclmul,sse2")))
static __m128i crc_kvec(unsigned i)
{
    return _mm_set_epi64x((long long)crc_k[i][1], (long long)crc_k[i][0]);
}

/*
 * Four lanes x[0..3] hold the stream up to @p (exclusive) folded: fold on
 * 64 bytes per step, then to one lane, then 16 bytes per step, then
 * the table for the value and the tail.
 */
__attribute__((target("pclmul,sse2")))
static inline uint32_t crc_clmul_tail(__m128i x0, __m128i x1, __m128i x2,
                                      __m128i x3, const uint8_t *p,
                                      size_t len)
{
    __m128i k = crc_kvec(3);
    uint8_t rest[16];

    while (len >= 64) {
        x0 = _mm_xor_si128(crc_fold(x0, k),
                           _mm_loadu_si128((const __m128i *)p));
        x1 = _mm_xor_si128(crc_fold(x1, k),
                           _mm_loadu_si128((const __m128i *)(p + 16)));
        x2 = _mm_xor_si128(crc_fold(x2, k),
                           _mm_loadu_si128((const __m128i *)(p + 32)));
        x3 = _mm_xor_si128(crc_fold(x3, k),
                           _mm_loadu_si128((const __m128i *)(p + 48)));
        p += 64;
        len -= 64;
    }
    x3 = _mm_xor_si128(x3, crc_fold(x0, crc_kvec(2)));
    x3 = _mm_xor_si128(x3, crc_fold(x1, crc_kvec(1)));
    x3 = _mm_xor_si128(x3, crc_fold(x2, crc_kvec(0)));
    k = crc_kvec(0);
    while (len >= 16) {
        x3 = _mm_xor_si128(crc_fold(x3, k),
                           _mm_loadu_si128((const __m128i *)p));
        p += 16;
        len -= 16;
    }
    _mm_storeu_si128((__m128i *)rest, x3);
    return crc_table_update(crc_table_update(0, rest, sizeof(rest)), p, len);
}

/* PCLMULQDQ on 128-bit registers; @len >= CRC_FIRST_LEN. */
__attribute__((target("pclmul,sse2")))
static uint32_t crc_clmul_update(uint32_t crc, const uint8_t *first,
                                 const uint8_t *p, size_t len)
{
    __m128i x0, x1, x2, x3;

    /* The state meets the first four bytes, as in the table's loop. */
    x0 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)first),
                       _mm_cvtsi32_si128((int)crc));
    x1 = _mm_loadu_si128((const __m128i *)(first + 16));
    x2 = _mm_loadu_si128((const __m128i *)(first + 32));
    x3 = _mm_loadu_si128((const __m128i *)(first + 48));
    return crc_clmul_tail(x0, x1, x2, x3, p + 64, len - 64);
}

/*
 * VPCLMULQDQ: the same folds two 128-bit lanes per instruction, eight
 * lanes 1024 bits apart per step of 128 bytes, then one fold of 512 bits
 * into the four lanes of crc_clmul_tail(). @len >= CRC_FIRST_LEN.
 */
__attribute__((target("vpclmulqdq,pclmul,avx2")))
static uint32_t crc_vclmul_update(uint32_t crc, const uint8_t *first,
                                  const uint8_t *p, size_t len)
{
    __m256i y0, y1, y2, y3, k;
    __m128i k4, b[8];
    size_t off;
    int i;

    if (len < 2 * CRC_FIRST_LEN) {
        return crc_clmul_update(crc, first, p, len);
    }
    y0 = _mm256_loadu_si256((const __m256i *)first);
    y0 = _mm256_xor_si256(y0, _mm256_zextsi128_si256(
                              _mm_cvtsi32_si128((int)crc)));
    y1 = _mm256_loadu_si256((const __m256i *)(first + 32));
    y2 = _mm256_loadu_si256((const __m256i *)(p + 64));
    y3 = _mm256_loadu_si256((const __m256i *)(p + 96));
    off = 128;
    k = _mm256_broadcastsi128_si256(crc_kvec(4));
    while (len - off >= 128) {
        const uint8_t *q = p + off;

        y0 = _mm256_xor_si256(_mm256_xor_si256(
                 _mm256_clmulepi64_epi128(y0, k, 0x00),
                 _mm256_clmulepi64_epi128(y0, k, 0x11)),
                 _mm256_loadu_si256((const __m256i *)q));
        y1 = _mm256_xor_si256(_mm256_xor_si256(
                 _mm256_clmulepi64_epi128(y1, k, 0x00),
                 _mm256_clmulepi64_epi128(y1, k, 0x11)),
                 _mm256_loadu_si256((const __m256i *)(q + 32)));
        y2 = _mm256_xor_si256(_mm256_xor_si256(
                 _mm256_clmulepi64_epi128(y2, k, 0x00),
                 _mm256_clmulepi64_epi128(y2, k, 0x11)),
                 _mm256_loadu_si256((const __m256i *)(q + 64)));
        y3 = _mm256_xor_si256(_mm256_xor_si256(
                 _mm256_clmulepi64_epi128(y3, k, 0x00),
                 _mm256_clmulepi64_epi128(y3, k, 0x11)),
                 _mm256_loadu_si256((const __m256i *)(q + 96)));
        off += 128;
    }
    b[0] = _mm256_castsi256_si128(y0);
    b[1] = _mm256_extracti128_si256(y0, 1);
    b[2] = _mm256_castsi256_si128(y1);
    b[3] = _mm256_extracti128_si256(y1, 1);
    b[4] = _mm256_castsi256_si128(y2);
    b[5] = _mm256_extracti128_si256(y2, 1);
    b[6] = _mm256_castsi256_si128(y3);
    b[7] = _mm256_extracti128_si256(y3, 1);
    k4 = crc_kvec(3);
    for (i = 0; i < 4; i++) {
        b[i] = _mm_xor_si128(crc_fold(b[i], k4), b[i + 4]);
    }
    return crc_clmul_tail(b[0], b[1], b[2], b[3], p + off, len - off);
}

#endif /* KITE_CRC_HAVE_CLMUL */

static bool crc_use(enum kite_roce_crc_impl impl)
{
    if (!crc_tab_ready) {
        crc_tab_init();
    }
    switch (impl) {
    case KITE_ROCE_CRC_TABLE:
        crc_impl = impl;
        return true;
    case KITE_ROCE_CRC_CLMUL:
    case KITE_ROCE_CRC_VCLMUL:
#if KITE_CRC_HAVE_CLMUL
        if (crc_clmul_supported(impl == KITE_ROCE_CRC_VCLMUL)) {
            crc_clmul_init();
            crc_impl = impl;
            return true;
        }
#endif
        return false;
    default:
        return crc_use(KITE_ROCE_CRC_VCLMUL) ||
               crc_use(KITE_ROCE_CRC_CLMUL) || crc_use(KITE_ROCE_CRC_TABLE);
    }
}

bool kite_roce_crc_select(enum kite_roce_crc_impl impl)
{
    return crc_use(impl);
}

enum kite_roce_crc_impl kite_roce_crc_current(void)
{
    if (crc_impl == KITE_ROCE_CRC_AUTO) {
        crc_use(KITE_ROCE_CRC_AUTO);
    }
    return crc_impl;
}

uint32_t kite_roce_crc32_first(uint32_t crc, const uint8_t *first,
                               const uint8_t *p, size_t len)
{
    switch (crc_impl) {
#if KITE_CRC_HAVE_CLMUL
    case KITE_ROCE_CRC_VCLMUL:
        return crc_vclmul_update(crc, first, p, len);
    case KITE_ROCE_CRC_CLMUL:
        return crc_clmul_update(crc, first, p, len);
#endif
    case KITE_ROCE_CRC_TABLE:
        crc = crc_table_update(crc, first, CRC_FIRST_LEN);
        return crc_table_update(crc, p + CRC_FIRST_LEN, len - CRC_FIRST_LEN);
    default:
        crc_use(KITE_ROCE_CRC_AUTO);
        return kite_roce_crc32_first(crc, first, p, len);
    }
}

uint32_t kite_roce_crc32(uint32_t crc, const uint8_t *p, size_t len)
{
    if (len < CRC_FIRST_LEN || crc_impl == KITE_ROCE_CRC_TABLE) {
        if (!crc_tab_ready) {
            crc_use(KITE_ROCE_CRC_AUTO);
        }
        return crc_table_update(crc, p, len);
    }
    return kite_roce_crc32_first(crc, p, p, len);
}
