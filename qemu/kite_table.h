/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 NIC device model: object tables that grow with use.
 *
 * A table holds fixed-size entries at indexes 0 .. size - 1 in chunks of
 * KITE_TABLE_CHUNK entries, allocated when an index in them is first
 * handed out: a table of 2^20 possible MRs costs a directory of 2^12
 * pointers until MRs are registered. Allocation hands out the lowest free
 * index at or above a floor; a bitmap of full chunks and one of used
 * entries per chunk bound its cost to a scan of size / 2^14 + 4 words,
 * whatever the guest did before. Chunks stay until kite_table_clear()
 * (device reset), so memory follows the most entries ever in use at once.
 *
 * Plain C (no QEMU headers), so that the host tests can drive it at full
 * size.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef KITE_TABLE_H
#define KITE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KITE_TABLE_CHUNK_SHIFT  8
#define KITE_TABLE_CHUNK        (1u << KITE_TABLE_CHUNK_SHIFT)

typedef struct KiteTableChunk KiteTableChunk;

typedef struct KiteTable {
    size_t entry_size;
    uint32_t size;              /* indexes 0 .. size - 1 */
    uint32_t ndir;              /* chunks the size needs */
    uint32_t used;              /* entries in use */
    uint32_t nchunks;           /* chunks allocated */
    KiteTableChunk **dir;       /* ndir chunk pointers, NULL: never used */
    uint64_t *full;             /* bit per chunk: every entry in use */
    uint32_t last_cost;         /* bitmap words the last allocation read */
} KiteTable;

/* A table of @size entries of @entry_size bytes; false: out of memory. */
bool kite_table_init(KiteTable *t, size_t entry_size, uint32_t size);
/* Frees every chunk and the directory. */
void kite_table_destroy(KiteTable *t);
/* Frees every chunk: no entry in use, per-entry generations back to 0. */
void kite_table_clear(KiteTable *t);
/* The entry at @index if it is in use, else NULL. */
void *kite_table_get(const KiteTable *t, uint32_t index);
/*
 * Takes the lowest free index >= @floor and returns its entry, zeroed, with
 * *@index set; NULL when every such index is in use or out of memory.
 */
void *kite_table_alloc(KiteTable *t, uint32_t floor, uint32_t *index);
/* Takes @index itself: NULL when it is in use, out of range or no memory. */
void *kite_table_alloc_at(KiteTable *t, uint32_t index);
/* Gives @index back (it must be in use) and bumps its generation. */
void kite_table_free(KiteTable *t, uint32_t index);
/*
 * How many times @index was freed since its chunk was allocated, modulo
 * 256: lets a caller make handles that differ from the last user's.
 */
uint8_t kite_table_gen(const KiteTable *t, uint32_t index);
/* The lowest index >= @from in use, or t->size when there is none. */
uint32_t kite_table_next(const KiteTable *t, uint32_t from);

#endif
