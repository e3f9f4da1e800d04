/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 NIC device model: object tables that grow with use
 * (kite_table.h).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <stdlib.h>
#include <string.h>

#include "kite_table.h"

#define KITE_TABLE_WORD_BITS    64
#define KITE_TABLE_MAP_WORDS    (KITE_TABLE_CHUNK / KITE_TABLE_WORD_BITS)
/* Entries start at this alignment inside a chunk. */
#define KITE_TABLE_ALIGN        16

struct KiteTableChunk {
    uint32_t used;
    uint64_t map[KITE_TABLE_MAP_WORDS];     /* bit per entry: in use */
    uint8_t gen[KITE_TABLE_CHUNK];          /* frees per entry */
    _Alignas(KITE_TABLE_ALIGN) unsigned char entries[];
};

static uint32_t kite_table_words(uint32_t bits)
{
    return (bits + KITE_TABLE_WORD_BITS - 1) / KITE_TABLE_WORD_BITS;
}

static bool kite_bit(const uint64_t *map, uint32_t bit)
{
    return map[bit / KITE_TABLE_WORD_BITS] >> (bit % KITE_TABLE_WORD_BITS) & 1;
}

static void kite_bit_set(uint64_t *map, uint32_t bit, bool on)
{
    uint64_t m = 1ull << (bit % KITE_TABLE_WORD_BITS);

    if (on) {
        map[bit / KITE_TABLE_WORD_BITS] |= m;
    } else {
        map[bit / KITE_TABLE_WORD_BITS] &= ~m;
    }
}

/*
 * The lowest clear bit >= @from of the @nbits-bit map, or @nbits; adds the
 * words read to *@cost.
 */
static uint32_t kite_next_zero(const uint64_t *map, uint32_t nbits,
                               uint32_t from, uint32_t *cost)
{
    uint32_t w = from / KITE_TABLE_WORD_BITS;
    uint64_t v;

    if (from >= nbits) {
        return nbits;
    }
    v = ~map[w] & (~0ull << (from % KITE_TABLE_WORD_BITS));
    (*cost)++;
    while (!v) {
        if (++w >= kite_table_words(nbits)) {
            return nbits;
        }
        v = ~map[w];
        (*cost)++;
    }
    from = w * KITE_TABLE_WORD_BITS + __builtin_ctzll(v);
    return from < nbits ? from : nbits;
}

/* As kite_next_zero(), for a set bit. */
static uint32_t kite_next_one(const uint64_t *map, uint32_t nbits,
                              uint32_t from)
{
    uint32_t w = from / KITE_TABLE_WORD_BITS;
    uint64_t v;

    if (from >= nbits) {
        return nbits;
    }
    v = map[w] & (~0ull << (from % KITE_TABLE_WORD_BITS));
    while (!v) {
        if (++w >= kite_table_words(nbits)) {
            return nbits;
        }
        v = map[w];
    }
    from = w * KITE_TABLE_WORD_BITS + __builtin_ctzll(v);
    return from < nbits ? from : nbits;
}

static size_t kite_table_stride(const KiteTable *t)
{
    return (t->entry_size + KITE_TABLE_ALIGN - 1) &
           ~(size_t)(KITE_TABLE_ALIGN - 1);
}

/* Entries chunk @ci holds: KITE_TABLE_CHUNK but for a partial last one. */
static uint32_t kite_chunk_len(const KiteTable *t, uint32_t ci)
{
    uint32_t rest = t->size - ci * KITE_TABLE_CHUNK;

    return rest < KITE_TABLE_CHUNK ? rest : KITE_TABLE_CHUNK;
}

static void *kite_table_entry(const KiteTable *t, KiteTableChunk *c,
                              uint32_t index)
{
    return c->entries + (index % KITE_TABLE_CHUNK) * kite_table_stride(t);
}

bool kite_table_init(KiteTable *t, size_t entry_size, uint32_t size)
{
    memset(t, 0, sizeof(*t));
    t->entry_size = entry_size;
    t->size = size;
    t->ndir = (size + KITE_TABLE_CHUNK - 1) / KITE_TABLE_CHUNK;
    t->dir = calloc(t->ndir, sizeof(*t->dir));
    t->full = calloc(kite_table_words(t->ndir), sizeof(*t->full));
    if (!t->dir || !t->full) {
        kite_table_destroy(t);
        return false;
    }
    return true;
}

void kite_table_clear(KiteTable *t)
{
    uint32_t c;

    for (c = 0; t->dir && c < t->ndir; c++) {
        free(t->dir[c]);
        t->dir[c] = NULL;
    }
    if (t->full) {
        memset(t->full, 0, kite_table_words(t->ndir) * sizeof(*t->full));
    }
    t->used = 0;
    t->nchunks = 0;
}

void kite_table_destroy(KiteTable *t)
{
    kite_table_clear(t);
    free(t->dir);
    free(t->full);
    t->dir = NULL;
    t->full = NULL;
}

void *kite_table_get(const KiteTable *t, uint32_t index)
{
    KiteTableChunk *c;

    if (index >= t->size) {
        return NULL;
    }
    c = t->dir[index / KITE_TABLE_CHUNK];
    if (!c || !kite_bit(c->map, index % KITE_TABLE_CHUNK)) {
        return NULL;
    }
    return kite_table_entry(t, c, index);
}

/* Marks free @index of an allocated chunk in use; its entry, zeroed. */
static void *kite_table_take(KiteTable *t, uint32_t index)
{
    KiteTableChunk *c = t->dir[index / KITE_TABLE_CHUNK];
    void *e = kite_table_entry(t, c, index);

    kite_bit_set(c->map, index % KITE_TABLE_CHUNK, true);
    if (++c->used == kite_chunk_len(t, index / KITE_TABLE_CHUNK)) {
        kite_bit_set(t->full, index / KITE_TABLE_CHUNK, true);
    }
    t->used++;
    memset(e, 0, t->entry_size);
    return e;
}

/* The chunk that holds @index, allocated now if needed; NULL: no memory. */
static KiteTableChunk *kite_table_chunk(KiteTable *t, uint32_t index)
{
    KiteTableChunk **c = &t->dir[index / KITE_TABLE_CHUNK];

    if (!*c) {
        *c = calloc(1, sizeof(**c) + KITE_TABLE_CHUNK * kite_table_stride(t));
        if (*c) {
            t->nchunks++;
        }
    }
    return *c;
}

void *kite_table_alloc(KiteTable *t, uint32_t floor, uint32_t *index)
{
    uint32_t ci = floor / KITE_TABLE_CHUNK;
    uint32_t cost = 0;
    uint32_t bit;

    t->last_cost = 0;
    while ((ci = kite_next_zero(t->full, t->ndir, ci, &cost)) < t->ndir) {
        KiteTableChunk *c = t->dir[ci];
        uint32_t start = ci == floor / KITE_TABLE_CHUNK ?
                         floor % KITE_TABLE_CHUNK : 0;
        uint32_t limit = kite_chunk_len(t, ci);

        bit = c ? kite_next_zero(c->map, limit, start, &cost) : start;
        if (bit < limit) {
            t->last_cost = cost;
            *index = ci * KITE_TABLE_CHUNK + bit;
            return kite_table_chunk(t, *index) ?
                   kite_table_take(t, *index) : NULL;
        }
        /* Only the floor's own chunk can be non-full yet have no room. */
        ci++;
    }
    t->last_cost = cost;
    return NULL;
}

void *kite_table_alloc_at(KiteTable *t, uint32_t index)
{
    KiteTableChunk *c;

    if (index >= t->size) {
        return NULL;
    }
    c = kite_table_chunk(t, index);
    if (!c || kite_bit(c->map, index % KITE_TABLE_CHUNK)) {
        return NULL;
    }
    return kite_table_take(t, index);
}

void kite_table_free(KiteTable *t, uint32_t index)
{
    KiteTableChunk *c = t->dir[index / KITE_TABLE_CHUNK];

    kite_bit_set(c->map, index % KITE_TABLE_CHUNK, false);
    c->gen[index % KITE_TABLE_CHUNK]++;
    c->used--;
    kite_bit_set(t->full, index / KITE_TABLE_CHUNK, false);
    t->used--;
}

uint8_t kite_table_gen(const KiteTable *t, uint32_t index)
{
    KiteTableChunk *c = index < t->size ? t->dir[index / KITE_TABLE_CHUNK] :
                        NULL;

    return c ? c->gen[index % KITE_TABLE_CHUNK] : 0;
}

uint32_t kite_table_next(const KiteTable *t, uint32_t from)
{
    uint32_t ci;

    for (ci = from / KITE_TABLE_CHUNK; from < t->size && ci < t->ndir;
         ci++, from = ci * KITE_TABLE_CHUNK) {
        KiteTableChunk *c = t->dir[ci];
        uint32_t bit;

        if (!c || !c->used) {
            continue;
        }
        bit = kite_next_one(c->map, kite_chunk_len(t, ci),
                            from % KITE_TABLE_CHUNK);
        if (bit < kite_chunk_len(t, ci)) {
            return ci * KITE_TABLE_CHUNK + bit;
        }
    }
    return t->size;
}
