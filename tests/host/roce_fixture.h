/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fixture of the engine's focused host tests (test_roce_ops.c,
 * test_roce_errors.c, test_roce_responder.c, test_roce_random.c): two nodes of
 * the simulation harness (roce_sim.[ch]), or one looped back, with one
 * connected QP each, and helpers to post work and check completions with
 * cmocka.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef ROCE_FIXTURE_H
#define ROCE_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kite_roce_pkt.h"
#include "roce_sim.h"

#define MEM_SIZE        (4u << 20)
#define IOVA            0x7f0000000000ull
#define PDN             3
#define ALL_ACCESS      (KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_REMOTE_WRITE | \
                         KITE_ACCESS_REMOTE_READ | KITE_ACCESS_REMOTE_ATOMIC)
#define RUN_STEPS       20000000ull

typedef struct Fx {
    Sim s;
    SimNode *a, *b;
    uint32_t a_scq, a_rcq, b_scq, b_rcq;
    uint32_t aqp, bqp;
    uint32_t akey, bkey;        /* whole memory, all access */
} Fx;

/* Where fast registrations map (fx_reg_mr()): FR_IOVA + memory offset. */
#define FR_IOVA         0x5e0000000000ull

/*
 * Two nodes (one when @loopback) with a QP of @type each, connected with
 * @pp (NULL: sim_default_params()), an MR over all memory on each.
 */
Fx *fx_new(const SimConnParams *pp, uint8_t type, bool loopback);
/* fx_new() with SQ and RQ WQE strides of 2^@sq_log and 2^@rq_log bytes. */
Fx *fx_new_stride(const SimConnParams *pp, uint8_t type, bool loopback,
                  uint8_t sq_log, uint8_t rq_log);
/* fx_new_stride() with @mem_size bytes of memory per node. */
Fx *fx_new_mem(const SimConnParams *pp, uint8_t type, bool loopback,
               uint8_t sq_log, uint8_t rq_log, size_t mem_size);
/*
 * A REG_MR work request for node @n's fast-register MR @key: the new key
 * (variant @variant, returned in *@new_key) maps [FR_IOVA + @off,
 * + @len) to memory offset @off (4 KiB aligned) with @access. The page
 * list is written now, in a scratch area of the key's own.
 */
SimWr fx_reg_mr(SimNode *n, uint32_t key, uint8_t variant, uint64_t off,
                uint32_t len, uint32_t access, uint32_t *new_key);
/* A LOCAL_INV or SEND_INV work request for @key. */
SimWr fx_inv(uint8_t op, uint32_t key, uint8_t flags);
void fx_free(Fx *f);
/* @n bytes of a pseudo-random pattern from @seed. */
void fx_fill(uint8_t *p, size_t n, uint32_t seed);
/* A signaled work request of opcode @op with @flags, no SGE yet. */
SimWr fx_wr(uint8_t op, uint8_t flags);
/* Append an SGE of @len bytes at memory offset @off through @key. */
void fx_sge(SimWr *w, uint64_t off, uint32_t len, uint32_t key);
/* Post a receive of one SGE. */
void fx_recv(SimNode *n, uint32_t qpn, uint64_t off, uint32_t len,
             uint32_t key);
/* Run the simulation until idle. */
void fx_run(Fx *f);
/* Poll one CQE from @cqn and check it (byte_len only on success). */
void fx_expect_cqe(SimNode *n, uint32_t cqn, uint32_t qpn, uint16_t idx,
                   uint8_t opcode, uint8_t status, uint32_t byte_len);
void fx_expect_no_cqe(SimNode *n, uint32_t cqn);
uint8_t fx_state(SimNode *n, uint32_t qpn);
/* A request packet from A's QP to B's, for a frame the test injects. */
void fx_pkt_a_to_b(const Fx *f, struct kite_roce_pkt *pk, uint8_t opcode,
                   uint32_t psn);
/* Little-endian 64-bit words in node memory (atomic operands). */
uint64_t mem_ld64(const uint8_t *p);
void mem_st64(uint8_t *p, uint64_t v);

#endif
