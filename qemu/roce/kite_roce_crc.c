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
 * Four registers fold 64 bytes per step (D = 512); then each of them
 * and each 16-byte block left folds straight onto the last whole block
 * (D = 128 per block between them), the last 1..15 bytes shift in, and
 * what is left is a 128-bit value congruent to everything consumed,
 * reduced to the 32-bit state (Barrett, see crc_clmul_reduce()).
 * The constants are computed here from P, not copied.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <string.h>

#include "kite_roce_crc.h"

/*
 * KITE_ROCE_CLMUL: the build says the host is x86-64 and the compiler
 * takes GCC's target attributes and intrinsics (qemu/meson.build, the
 * host Makefiles); without it only the table is built.
 */
#ifdef KITE_ROCE_CLMUL
#define KITE_CRC_HAVE_CLMUL     1
#include <immintrin.h>
#else
#define KITE_CRC_HAVE_CLMUL     0
#endif

#define CRC32_POLY_REFLECTED    0xedb88320u
#define CRC32_POLY_NORMAL       0x04c11db7u
#define CRC_SLICES              16
/*
 * The carry-less paths start on 64 bytes (OR'ed with a mask for
 * kite_roce_crc32_or()); below that the table is as fast.
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

/*
 * Fold distances the carry-less paths use, in 16-byte blocks of 128 bits:
 * 1 to 7 (the tail folds every lane and block left straight onto the
 * last one) and 8 (the VPCLMULQDQ loop's).
 */
#define FOLD_BLOCK_BITS         128
#define FOLD_MAX_BLOCKS         8
#define FOLD_4X                 4
#define FOLD_8X                 8

/*
 * The 128-bit helpers are inlined into both carry-less paths: a call from
 * the AVX2 one into legacy-SSE code would pay for the switch.
 */
#define CRC_CLMUL_INLINE \
    __attribute__((target("pclmul,sse4.1"), always_inline))

/*
 * Per distance D of n blocks, at [n - 1]: { K(D + 64), K(D) } for the low
 * and the high half.
 */
static uint64_t crc_k[FOLD_MAX_BLOCKS][2];
/* The final reduction's: K(96), K(64), floor(x^64 / P), P (see there). */
static uint64_t crc_k96, crc_k64, crc_mu, crc_p;

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

/*
 * floor(x^64 / P) with bit j the coefficient of x^(32 - j) (33 bits), by
 * long division.
 */
static uint64_t crc_barrett_mu(void)
{
    unsigned __int128 rem = (unsigned __int128)1 << 64;
    unsigned __int128 poly = (unsigned __int128)1 << 32 | CRC32_POLY_NORMAL;
    uint64_t q = 0;
    int d;

    for (d = 64; d >= 32; d--) {
        if ((rem >> d) & 1) {
            q |= 1ull << (d - 32);
            rem ^= poly << (d - 32);
        }
    }
    /* q has degree 32: reflect its 33 coefficients. */
    return crc_reflect32((uint32_t)(q >> 1)) | (q & 1) << 32;
}

static void crc_clmul_init(void)
{
    unsigned i;

    for (i = 0; i < FOLD_MAX_BLOCKS; i++) {
        crc_k[i][0] = crc_fold_const((i + 1) * FOLD_BLOCK_BITS + 64);
        crc_k[i][1] = crc_fold_const((i + 1) * FOLD_BLOCK_BITS);
    }
    crc_k96 = crc_fold_const(96);
    crc_k64 = crc_fold_const(64);
    crc_mu = crc_barrett_mu();
    /* P with bit j the coefficient of x^(32 - j). */
    crc_p = (uint64_t)CRC32_POLY_REFLECTED << 1 | 1;
}

static bool crc_clmul_supported(bool wide)
{
    __builtin_cpu_init();
    if (wide) {
        return __builtin_cpu_supports("vpclmulqdq") &&
               __builtin_cpu_supports("avx2") &&
               __builtin_cpu_supports("pclmul");
    }
    return __builtin_cpu_supports("pclmul") &&
           __builtin_cpu_supports("sse4.1");
}

CRC_CLMUL_INLINE
static inline __m128i crc_fold(__m128i x, __m128i k)
{
    return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
                         _mm_clmulepi64_si128(x, k, 0x11));
}

CRC_CLMUL_INLINE
static inline __m128i crc_kvec(unsigned blocks)
{
    return _mm_loadu_si128((const __m128i *)crc_k[blocks - 1]);
}

/*
 * The last @len (1..15) bytes at @p after the lane @x: the 16-byte window
 * that ends with them is @x's last 16 - @len bytes and those bytes, and
 * @x's first @len bytes, which fall out of it, are the end of the block
 * before it: folded on by 128 bits. No byte-at-a-time steps.
 */
CRC_CLMUL_INLINE
static inline __m128i crc_clmul_last(__m128i x, const uint8_t *p, size_t len)
{
    /*
     * loadu(shuf + len): byte i selects byte i + len - 16, so that PSHUFB
     * moves up by 16 - len bytes (indexes with bit 7 set give zero);
     * XORed with 0x80, the same selects byte i + len: down by len.
     */
    static const uint8_t shuf[32] = {
        0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87,
        0x88, 0x89, 0x8a, 0x8b, 0x8c, 0x8d, 0x8e, 0x8f,
        0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
        0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
    };
    __m128i up = _mm_loadu_si128((const __m128i *)(shuf + len));
    __m128i down = _mm_xor_si128(up, _mm_set1_epi8((char)0x80));
    __m128i w;

    /*
     * x's last 16 - len bytes moved down, then the len bytes that end the
     * data (at p + len; at least 64 bytes precede p), where down selects
     * nothing.
     */
    w = _mm_blendv_epi8(_mm_shuffle_epi8(x, down),
                        _mm_loadu_si128((const __m128i *)(p + len - 16)),
                        down);
    /* x's first len bytes, at the top of their own block: folded on. */
    return _mm_xor_si128(w, crc_fold(_mm_shuffle_epi8(x, up), crc_kvec(1)));
}

CRC_CLMUL_INLINE
static inline __m128i crc_mul64(uint64_t a, uint64_t b)
{
    return _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)a),
                                _mm_cvtsi64_si128((long long)b), 0x00);
}

CRC_CLMUL_INLINE
static inline uint64_t crc_hi64(__m128i x)
{
    return (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(x, x));
}

/*
 * The CRC state of the 128-bit lane @x (what the table would give for its
 * 16 bytes from state 0): (X x^32) mod P, with X = A x^64 + B as at the
 * top. A x^96 + B x^32 folds A by K(96) into S of degree below 96 (B
 * x^32 is B four bytes on); S = H x^64 + L folds H by K(64) into U of
 * degree below 64; U = Uh x^32 + Ul leaves Barrett's remainder
 * Ul + (q p mod x^32), q = floor(Uh floor(x^64 / P) / x^32), p = P - x^32
 * (taking all of P only changes the half that is dropped).
 */
CRC_CLMUL_INLINE
static inline uint32_t crc_clmul_reduce(__m128i x)
{
    uint64_t u, q;
    __m128i s;

    s = _mm_xor_si128(crc_mul64((uint64_t)_mm_cvtsi128_si64(x), crc_k96),
                      _mm_slli_si128(_mm_unpackhi_epi64(x,
                                                        _mm_setzero_si128()),
                                     4));
    u = crc_hi64(crc_mul64((uint64_t)_mm_cvtsi128_si64(s), crc_k64)) ^
        crc_hi64(s);
    q = (uint64_t)_mm_cvtsi128_si64(crc_mul64(u & 0xffffffffu, crc_mu)) &
        0xffffffffu;
    return (uint32_t)((u ^ (uint64_t)_mm_cvtsi128_si64(crc_mul64(q, crc_p)))
                      >> 32);
}

/*
 * Four lanes x[0..3] hold the stream up to @p (exclusive) folded: fold on
 * 64 bytes per step, then all onto the last whole block, then the last
 * bytes, then the reduction to the 32-bit state.
 */
CRC_CLMUL_INLINE
static inline uint32_t crc_clmul_tail(__m128i x0, __m128i x1, __m128i x2,
                                      __m128i x3, const uint8_t *p,
                                      size_t len)
{
    __m128i k = crc_kvec(FOLD_4X), x;
    size_t r, j;

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
    /*
     * The r (0..3) whole blocks left, the last of which (else x3) takes
     * every lane and block before it folded straight on: independent
     * products, not a chain of folds.
     */
    r = len / 16;
    x = r ? _mm_xor_si128(_mm_loadu_si128((const __m128i *)
                                          (p + 16 * (r - 1))),
                          crc_fold(x3, crc_kvec(r))) : x3;
    for (j = 0; j + 1 < r; j++) {
        x = _mm_xor_si128(x, crc_fold(_mm_loadu_si128((const __m128i *)
                                                      (p + 16 * j)),
                                      crc_kvec(r - 1 - j)));
    }
    x = _mm_xor_si128(x, _mm_xor_si128(crc_fold(x2, crc_kvec(r + 1)),
                      _mm_xor_si128(crc_fold(x1, crc_kvec(r + 2)),
                                    crc_fold(x0, crc_kvec(r + 3)))));
    p += 16 * r;
    len -= 16 * r;
    if (len) {
        x = crc_clmul_last(x, p, len);
    }
    return crc_clmul_reduce(x);
}

/* 16 bytes at @p OR'ed with 16 bytes at @or (NULL: none). */
CRC_CLMUL_INLINE
static inline __m128i crc_load_or(const uint8_t *p, const uint8_t *or)
{
    __m128i v = _mm_loadu_si128((const __m128i *)p);

    return or ? _mm_or_si128(v, _mm_loadu_si128((const __m128i *)or)) : v;
}

/* PCLMULQDQ on 128-bit registers; @len >= CRC_FIRST_LEN. */
CRC_CLMUL_INLINE
static inline uint32_t crc_clmul_body(uint32_t crc, const uint8_t *p,
                                      size_t len, const uint8_t *or)
{
    __m128i x0, x1, x2, x3;

    /* The state meets the first four bytes, as in the table's loop. */
    x0 = _mm_xor_si128(crc_load_or(p, or), _mm_cvtsi32_si128((int)crc));
    x1 = crc_load_or(p + 16, or ? or + 16 : NULL);
    x2 = crc_load_or(p + 32, or ? or + 32 : NULL);
    x3 = crc_load_or(p + 48, or ? or + 48 : NULL);
    return crc_clmul_tail(x0, x1, x2, x3, p + 64, len - 64);
}

__attribute__((target("pclmul,sse4.1")))
static uint32_t crc_clmul_update(uint32_t crc, const uint8_t *p, size_t len,
                                 const uint8_t *or)
{
    return crc_clmul_body(crc, p, len, or);
}

/*
 * VPCLMULQDQ: the same folds two 128-bit lanes per instruction, eight
 * lanes 1024 bits apart per step of 128 bytes, then one fold of 512 bits
 * into the four lanes of crc_clmul_tail(). @len >= CRC_FIRST_LEN.
 */
#define CRC_VCLMUL_INLINE \
    __attribute__((target("vpclmulqdq,pclmul,avx2"), always_inline))

/* 32 bytes at @p, also stored at @dst unless it is NULL. */
CRC_VCLMUL_INLINE
static inline __m256i crc_load_copy(const uint8_t *p, uint8_t *dst)
{
    __m256i v = _mm256_loadu_si256((const __m256i *)p);

    if (dst) {
        _mm256_storeu_si256((__m256i *)dst, v);
    }
    return v;
}

/*
 * @dst non-NULL: the data is read from @p and written to @dst as it is
 * folded, and the tail folds from @dst (a copy fused with the CRC: each
 * byte is loaded once). @len >= 2 * CRC_FIRST_LEN.
 */
CRC_VCLMUL_INLINE
static inline uint32_t crc_vclmul_body(uint32_t crc, const uint8_t *p,
                                       size_t len, const uint8_t *or,
                                       uint8_t *dst)
{
    __m256i y0, y1, y2, y3, k;
    __m128i k4, b[8];
    size_t off;
    int i;

    y0 = crc_load_copy(p, dst);
    y1 = crc_load_copy(p + 32, dst ? dst + 32 : NULL);
    if (or) {
        y0 = _mm256_or_si256(y0, _mm256_loadu_si256((const __m256i *)or));
        y1 = _mm256_or_si256(y1, _mm256_loadu_si256((const __m256i *)
                                                     (or + 32)));
    }
    y0 = _mm256_xor_si256(y0, _mm256_zextsi128_si256(
                              _mm_cvtsi32_si128((int)crc)));
    y2 = crc_load_copy(p + 64, dst ? dst + 64 : NULL);
    y3 = crc_load_copy(p + 96, dst ? dst + 96 : NULL);
    off = 128;
    k = _mm256_broadcastsi128_si256(crc_kvec(FOLD_8X));
    while (len - off >= 128) {
        const uint8_t *q = p + off;

        y0 = _mm256_xor_si256(_mm256_xor_si256(
                 _mm256_clmulepi64_epi128(y0, k, 0x00),
                 _mm256_clmulepi64_epi128(y0, k, 0x11)),
                 crc_load_copy(q, dst ? dst + off : NULL));
        y1 = _mm256_xor_si256(_mm256_xor_si256(
                 _mm256_clmulepi64_epi128(y1, k, 0x00),
                 _mm256_clmulepi64_epi128(y1, k, 0x11)),
                 crc_load_copy(q + 32, dst ? dst + off + 32 : NULL));
        y2 = _mm256_xor_si256(_mm256_xor_si256(
                 _mm256_clmulepi64_epi128(y2, k, 0x00),
                 _mm256_clmulepi64_epi128(y2, k, 0x11)),
                 crc_load_copy(q + 64, dst ? dst + off + 64 : NULL));
        y3 = _mm256_xor_si256(_mm256_xor_si256(
                 _mm256_clmulepi64_epi128(y3, k, 0x00),
                 _mm256_clmulepi64_epi128(y3, k, 0x11)),
                 crc_load_copy(q + 96, dst ? dst + off + 96 : NULL));
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
    k4 = crc_kvec(FOLD_4X);
    for (i = 0; i < 4; i++) {
        b[i] = _mm_xor_si128(crc_fold(b[i], k4), b[i + 4]);
    }
    if (dst) {
        memcpy(dst + off, p + off, len - off);
        p = dst;
    }
    return crc_clmul_tail(b[0], b[1], b[2], b[3], p + off, len - off);
}

__attribute__((target("vpclmulqdq,pclmul,avx2")))
static uint32_t crc_vclmul_update(uint32_t crc, const uint8_t *p,
                                  size_t len, const uint8_t *or)
{
    if (len < 2 * CRC_FIRST_LEN) {
        return crc_clmul_body(crc, p, len, or);
    }
    return crc_vclmul_body(crc, p, len, or, NULL);
}

__attribute__((target("vpclmulqdq,pclmul,avx2")))
static uint32_t crc_vclmul_copy(uint32_t crc, uint8_t *dst,
                                const uint8_t *src, size_t len)
{
    return crc_vclmul_body(crc, src, len, NULL, dst);
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

/* @len >= CRC_FIRST_LEN; @or may be NULL. */
static uint32_t crc_update(uint32_t crc, const uint8_t *p, size_t len,
                           const uint8_t *or)
{
    uint8_t first[CRC_FIRST_LEN];
    size_t i;

    switch (crc_impl) {
#if KITE_CRC_HAVE_CLMUL
    case KITE_ROCE_CRC_VCLMUL:
        return crc_vclmul_update(crc, p, len, or);
    case KITE_ROCE_CRC_CLMUL:
        return crc_clmul_update(crc, p, len, or);
#endif
    case KITE_ROCE_CRC_TABLE:
        if (!or) {
            return crc_table_update(crc, p, len);
        }
        for (i = 0; i < sizeof(first); i++) {
            first[i] = p[i] | or[i];
        }
        crc = crc_table_update(crc, first, sizeof(first));
        return crc_table_update(crc, p + sizeof(first), len - sizeof(first));
    default:
        crc_use(KITE_ROCE_CRC_AUTO);
        return crc_update(crc, p, len, or);
    }
}

uint32_t kite_roce_crc32_or(uint32_t crc, const uint8_t *p, size_t len,
                            const uint8_t *or)
{
    return crc_update(crc, p, len, or);
}

uint32_t kite_roce_crc32(uint32_t crc, const uint8_t *p, size_t len)
{
    if (len >= CRC_FIRST_LEN) {
        return crc_update(crc, p, len, NULL);
    }
    if (!crc_tab_ready) {
        crc_use(KITE_ROCE_CRC_AUTO);
    }
    return crc_table_update(crc, p, len);
}

uint32_t kite_roce_crc32_copy(uint32_t crc, uint8_t *dst, const uint8_t *src,
                              size_t len)
{
#if KITE_CRC_HAVE_CLMUL
    if (crc_impl == KITE_ROCE_CRC_VCLMUL && len >= 2 * CRC_FIRST_LEN) {
        return crc_vclmul_copy(crc, dst, src, len);
    }
#endif
    /* Copy, then CRC the copy while it is in cache. */
    memcpy(dst, src, len);
    return kite_roce_crc32(crc, dst, len);
}
