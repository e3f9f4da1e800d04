/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Micro-benchmark of the Kite RoCEv2 engine alone (qemu/roce/): two engines
 * in one process joined by an in-memory wire move RDMA WRITEs of one size
 * (64 KiB by default) from a buffer of node A to a buffer of node B, RC,
 * at RoCE path MTU 1024 and 4096. Printed per MTU: the engine's MB/s
 * (10^6 bytes of payload per second), memcpy's MB/s over the same bytes
 * between the same two buffers, and the engine's figure as a percentage
 * of memcpy's.
 *
 * The host side is as thin as it can be: memory access is a bounds and
 * key check and a memcpy (the DMA of the device model), the wire is one
 * copy of each frame into a ring per direction (a socket write), the SQ
 * and CQ are plain rings. Everything else is the engine.
 *
 * A second row per MTU runs each engine on its own thread, as in two QEMU
 * processes on two cores: each wire is a lock-free single-producer,
 * single-consumer ring of frames (the sender copies each frame in, the
 * receiver's engine parses it in place), and the figure is timed by the
 * wall clock from start to the last completion. It needs two idle cores to
 * mean anything.
 *
 * A benchmark, not a test: nothing timed is checked. The data is: every
 * completion must be a success with the right length, the engines must
 * count no retransmission, no ICRC error and no drop, and the destination
 * must hold the source's bytes (a pattern that changes with each pass).
 * Any of these failing exits 1.
 *
 *   engine-bench [-s SIZE] [-n MESSAGES] [-r REPEATS] [-m 1024|4096]...
 *                [-c table|clmul|vclmul] [-t 1|2] [-C]
 *   engine-bench -k
 *
 * -c forces one ICRC implementation (default: the engine's own choice).
 * -t 1 prints only the one-thread row, -t 2 only the two-thread one
 * (default: both). -C leaves out the host's mem_read_crc, so that the
 * engine copies each payload into the frame and then CRCs the frame (as
 * for a host without the op, or a payload under 2 KiB) instead of CRCing
 * as it copies. -k prints instead the ICRC's GB/s over frames of
 * several lengths for each implementation this CPU has (thread CPU time,
 * best of three, each frame's CRC state feeding the next).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kite_roce.h"
#include "kite_roce_abi.h"
#include "kite_roce_crc.h"
#include "kite_roce_pkt.h"

#define NODES           2
#define PDN             1
#define QPN_A           0x21
#define QPN_B           0x22
#define SQ_LOG_DEPTH    7
#define SQ_LOG_STRIDE   KITE_SQ_MIN_LOG_STRIDE
#define RQ_LOG_DEPTH    4
#define RQ_LOG_STRIDE   KITE_RQ_MIN_LOG_STRIDE
#define CQ_LOG_DEPTH    10
#define MR_KEY          kite_key_make(1, 0x5a)
#define MR_IOVA         0x7f0000000000ull
/* Frames the wire holds per direction: more than an engine run sends. */
#define WIRE_SLOTS      1024
#define WIRE_SLOT_SIZE  KITE_ROCE_MAX_FRAME
/* Packets per kite_roce_run(), as the device model's bottom half. */
#define RUN_BUDGET      64
/* Local ACK timeout 4.096 us << 16: ~268 ms, far beyond one message. */
#define ACK_TIMEOUT     16
#define MAX_MTUS        4
#define DEF_SIZE        (64u << 10)
#define DEF_MSGS        4000u
#define DEF_REPEATS     3u
/*
 * The two-thread wire: slots per direction, and the free slots an engine
 * run needs before it starts (a run sends at most one frame per packet of
 * its budget, plus the ACK it may flush), so that no transmit waits for
 * the peer.
 */
#define TWIRE_SLOTS     512
#define TWIRE_RUN_ROOM  (2 * RUN_BUDGET)
/* Spins on a full or empty ring between two looks at the clock. */
#define TWIRE_SPINS     4096
/*
 * Idle spins before a thread yields its core: with fewer free cores than
 * threads, a spinning thread would hold back the one it waits for.
 */
#define TWIRE_YIELD     64
/* Without any progress for this long a two-thread run has stalled. */
#define STALL_NS        10000000000ull
#define CACHE_LINE      64
/* -k: the longest frame it times, and the bytes per length and pass. */
#define CRC_BENCH_MAX   8192
#define CRC_BENCH_BYTES (64u << 20)
#define NS_PER_S        1000000000.0
#define BYTES_PER_MB    1e6

typedef struct Wire {
    uint8_t (*slot)[WIRE_SLOT_SIZE];
    uint32_t len[WIRE_SLOTS];
    uint32_t head, tail;        /* free-running */
} Wire;

/*
 * One direction of the two-thread wire: the sending thread alone moves
 * tail, the receiving one alone moves head (both free-running); a slot is
 * published by the release store of tail and given back by that of head.
 */
typedef struct TWire {
    _Alignas(CACHE_LINE) _Atomic uint32_t tail;
    _Alignas(CACHE_LINE) _Atomic uint32_t head;
    _Alignas(CACHE_LINE) uint8_t (*slot)[WIRE_SLOT_SIZE];
    uint32_t len[TWIRE_SLOTS];
} TWire;

typedef struct Node {
    KiteRoce *e;
    KiteRoceQp *qp;
    struct kite_roce_qp_cfg cfg;
    uint8_t mac[6];
    uint8_t gid[16];
    uint8_t *mem;               /* the MR: IOVA MR_IOVA */
    size_t mem_len;
    uint8_t *sq, *rq;
    uint32_t sq_pi;
    struct kite_cqe *cq;
    uint32_t cq_pi, cq_ci;
    uint64_t deadline;
    Wire *out;                  /* frames this node sends */
    TWire *tout, *tin;          /* the same on two threads, and the peer's */
    bool kicked;
    bool failed;                /* a callback saw something wrong */
    uint64_t thread_cpu_ns;     /* two-thread mode: the CPU time of a pass */
} Node;

static Node nodes[NODES];
static Wire wires[NODES];
static TWire twires[NODES];
/* Two-thread mode: set when A has seen its last completion, or on failure. */
static _Atomic bool twire_stop;

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The engines' clock (retransmission timers). */
static uint64_t now_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

/*
 * What the figures are timed with: this thread's CPU time, so that other
 * work on a shared machine does not count (the benchmark does no I/O and
 * never sleeps, so on an idle machine this is the elapsed time).
 */
static uint64_t cpu_ns(void)
{
    return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static void *xalloc(size_t n)
{
    void *p = aligned_alloc(64, (n + 63) & ~(size_t)63);

    if (!p) {
        fprintf(stderr, "engine-bench: out of memory\n");
        exit(1);
    }
    memset(p, 0, n);
    return p;
}

/* ---- struct kite_roce_ops ---- */

/* The MR's bytes at @va for @len, or NULL (a wrong key or range). */
static uint8_t *mr_bytes(Node *n, uint32_t pdn, uint32_t key, uint64_t va,
                         uint32_t len)
{
    uint64_t off = va - MR_IOVA;

    if (key != MR_KEY || pdn != PDN || va < MR_IOVA || off > n->mem_len ||
        len > n->mem_len - off) {
        n->failed = true;
        return NULL;
    }
    return n->mem + off;
}

static uint8_t cb_mem_rw(void *opaque, void *qp, uint32_t pdn,
                         uint32_t key, uint32_t access, uint64_t va,
                         void *buf, uint32_t len, bool write)
{
    Node *n = opaque;
    uint8_t *m = mr_bytes(n, pdn, key, va, len);

    (void)qp;
    (void)access;
    if (!m) {
        return KITE_CQE_LOC_PROT_ERR;
    }
    if (write) {
        memcpy(m, buf, len);
    } else {
        memcpy(buf, m, len);
    }
    return KITE_CQE_SUCCESS;
}

/* The same local read with the CRC folded into the copy. */
static uint8_t cb_mem_read_crc(void *opaque, void *qp, uint32_t pdn,
                               uint32_t key, uint32_t access, uint64_t va,
                               void *buf, uint32_t len, uint32_t *crc)
{
    uint8_t *m = mr_bytes(opaque, pdn, key, va, len);

    (void)qp;
    (void)access;
    if (!m) {
        return KITE_CQE_LOC_PROT_ERR;
    }
    *crc = kite_roce_crc32_copy(*crc, buf, m, len);
    return KITE_CQE_SUCCESS;
}

static bool cb_wqe_read(void *opaque, void *qp, bool rq, uint32_t slot,
                        void *buf, uint32_t len)
{
    Node *n = opaque;

    (void)qp;
    if (rq) {
        memcpy(buf, n->rq + ((size_t)slot << RQ_LOG_STRIDE), len);
    } else {
        memcpy(buf, n->sq + ((size_t)slot << SQ_LOG_STRIDE), len);
    }
    return true;
}

static bool cb_cq_post(void *opaque, uint32_t cqn, const struct kite_cqe *cqe)
{
    Node *n = opaque;

    (void)cqn;
    if (n->cq_pi - n->cq_ci >= (1u << CQ_LOG_DEPTH)) {
        n->failed = true;
        return false;
    }
    n->cq[kite_ring_slot(n->cq_pi++, CQ_LOG_DEPTH)] = *cqe;
    return true;
}

static void cb_qp_event(void *opaque, void *qp, uint8_t type)
{
    Node *n = opaque;

    (void)qp;
    fprintf(stderr, "engine-bench: QP event 0x%x\n", type);
    n->failed = true;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* One idle turn of a two-thread loop: pause, now and then yield. */
static void twire_idle(unsigned spins)
{
    if (spins % TWIRE_YIELD == 0) {
        sched_yield();
    } else {
        cpu_relax();
    }
}

static bool twire_room(TWire *w, uint32_t need)
{
    uint32_t tail = atomic_load_explicit(&w->tail, memory_order_relaxed);

    return TWIRE_SLOTS - (tail - atomic_load_explicit(&w->head,
                                                      memory_order_acquire))
           >= need;
}

/* A frame onto the two-thread wire; waits (rarely) for the peer to drain. */
static void twire_send(Node *n, const uint8_t *frame, size_t len)
{
    TWire *w = n->tout;
    uint32_t tail = atomic_load_explicit(&w->tail, memory_order_relaxed);
    uint64_t t0 = 0;
    unsigned spins = 0;

    while (!twire_room(w, 1)) {
        if (atomic_load_explicit(&twire_stop, memory_order_relaxed)) {
            n->failed = true;
            return;
        }
        if (++spins % TWIRE_SPINS == 0) {
            uint64_t t = now_ns();

            if (!t0) {
                t0 = t;
            } else if (t - t0 > STALL_NS) {
                fprintf(stderr, "engine-bench: wire stalled\n");
                n->failed = true;
                return;
            }
        }
        twire_idle(spins);
    }
    memcpy(w->slot[tail % TWIRE_SLOTS], frame, len);
    w->len[tail % TWIRE_SLOTS] = (uint32_t)len;
    atomic_store_explicit(&w->tail, tail + 1, memory_order_release);
}

static void cb_transmit(void *opaque, const uint8_t *frame, size_t len)
{
    Node *n = opaque;
    Wire *w = n->out;

    if (n->tout) {
        if (len > WIRE_SLOT_SIZE) {
            n->failed = true;
            return;
        }
        twire_send(n, frame, len);
        return;
    }
    if (w->tail - w->head >= WIRE_SLOTS || len > WIRE_SLOT_SIZE) {
        fprintf(stderr, "engine-bench: wire full\n");
        n->failed = true;
        return;
    }
    memcpy(w->slot[w->tail % WIRE_SLOTS], frame, len);
    w->len[w->tail % WIRE_SLOTS] = (uint32_t)len;
    w->tail++;
}

static uint64_t cb_now(void *opaque)
{
    (void)opaque;
    return now_ns();
}

static void cb_timer_mod(void *opaque, void *qp, uint64_t deadline)
{
    Node *n = opaque;

    (void)qp;
    n->deadline = deadline;
}

static void cb_kick(void *opaque)
{
    Node *n = opaque;

    n->kicked = true;
}

static bool cb_gid_is_local(void *opaque, const uint8_t *gid)
{
    Node *n = opaque;

    return !memcmp(gid, n->gid, sizeof(n->gid));
}

static struct kite_roce_ops ops = {
    .mem_rw = cb_mem_rw,
    .mem_read_crc = cb_mem_read_crc,
    .wqe_read = cb_wqe_read,
    .cq_post = cb_cq_post,
    .qp_event = cb_qp_event,
    .transmit = cb_transmit,
    .now_ns = cb_now,
    .timer_mod = cb_timer_mod,
    .kick = cb_kick,
    .gid_is_local = cb_gid_is_local,
};

/* ---- setup ---- */

static void node_init(Node *n, int id, size_t mem_len, bool threaded)
{
    memset(n, 0, sizeof(*n));
    n->mac[0] = 0x02;
    n->mac[5] = (uint8_t)(id + 1);
    /* ::ffff:198.18.0.(id + 1) */
    n->gid[10] = n->gid[11] = 0xff;
    n->gid[12] = 198;
    n->gid[13] = 18;
    n->gid[15] = (uint8_t)(id + 1);
    n->mem_len = mem_len;
    n->mem = xalloc(mem_len);
    n->sq = xalloc((size_t)1 << (SQ_LOG_DEPTH + SQ_LOG_STRIDE));
    n->rq = xalloc((size_t)1 << (RQ_LOG_DEPTH + RQ_LOG_STRIDE));
    n->cq = xalloc(sizeof(*n->cq) << CQ_LOG_DEPTH);
    n->deadline = KITE_ROCE_TIMER_OFF;
    n->out = &wires[id];
    wires[id].slot = xalloc(sizeof(*wires[id].slot) * WIRE_SLOTS);
    wires[id].head = wires[id].tail = 0;
    if (threaded) {
        n->tout = &twires[id];
        n->tin = &twires[!id];
        twires[id].slot = xalloc(sizeof(*twires[id].slot) * TWIRE_SLOTS);
        atomic_init(&twires[id].head, 0);
        atomic_init(&twires[id].tail, 0);
    }
    n->e = kite_roce_new(&ops, n);
    if (!n->e) {
        fprintf(stderr, "engine-bench: kite_roce_new failed\n");
        exit(1);
    }
    kite_roce_set_port(n->e, n->mac, 9000);
    n->cfg = (struct kite_roce_qp_cfg) {
        .host = n,
        .qpn = id ? QPN_B : QPN_A,
        .type = KITE_QPT_RC,
        .pdn = PDN,
        .send_cqn = 1,
        .recv_cqn = 1,
        .sq_log_depth = SQ_LOG_DEPTH,
        .sq_log_stride = SQ_LOG_STRIDE,
        .rq_log_depth = RQ_LOG_DEPTH,
        .rq_log_stride = RQ_LOG_STRIDE,
    };
    n->qp = kite_roce_qp_create(n->e, &n->cfg);
    if (!n->qp) {
        fprintf(stderr, "engine-bench: kite_roce_qp_create failed\n");
        exit(1);
    }
}

static void node_free(Node *n)
{
    kite_roce_free(n->e);
    free(n->mem);
    free(n->sq);
    free(n->rq);
    free(n->cq);
    free(n->out->slot);
    if (n->tout) {
        free(n->tout->slot);
    }
}

/* RESET -> INIT -> RTR -> RTS towards @peer at path MTU @mtu. */
static void node_connect(Node *n, const Node *peer, uint8_t mtu)
{
    struct kite_roce_qp_attr a;
    uint32_t all = KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_REMOTE_WRITE |
                   KITE_ACCESS_REMOTE_READ;

    memset(&a, 0, sizeof(a));
    a.state = KITE_QPS_INIT;
    a.access = all;
    kite_roce_qp_modify(n->qp, &a, KITE_QP_ATTR_STATE |
                        KITE_QP_ATTR_ACCESS_FLAGS);
    a.state = KITE_QPS_RTR;
    a.path_mtu = mtu;
    a.dest_qpn = peer->cfg.qpn;
    a.rq_psn = 0x300;
    a.max_dest_rd_atomic = 1;
    memcpy(a.path.smac, n->mac, 6);
    memcpy(a.path.dmac, peer->mac, 6);
    memcpy(a.path.sgid, n->gid, 16);
    memcpy(a.path.dgid, peer->gid, 16);
    a.path.hop_limit = 64;
    kite_roce_qp_modify(n->qp, &a, KITE_QP_ATTR_STATE | KITE_QP_ATTR_AV |
                        KITE_QP_ATTR_PATH_MTU | KITE_QP_ATTR_DEST_QPN |
                        KITE_QP_ATTR_RQ_PSN |
                        KITE_QP_ATTR_MAX_DEST_RD_ATOMIC);
    a.state = KITE_QPS_RTS;
    a.sq_psn = 0x300;
    a.timeout = ACK_TIMEOUT;
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.max_rd_atomic = 1;
    kite_roce_qp_modify(n->qp, &a, KITE_QP_ATTR_STATE | KITE_QP_ATTR_SQ_PSN |
                        KITE_QP_ATTR_TIMEOUT | KITE_QP_ATTR_RETRY_CNT |
                        KITE_QP_ATTR_RNR_RETRY |
                        KITE_QP_ATTR_MAX_QP_RD_ATOMIC);
}

/* Write a signaled RDMA WRITE of @len bytes, A's offset 0 to B's 0. */
static void post_write(Node *n, uint32_t len)
{
    uint8_t *w = n->sq + ((size_t)kite_ring_slot(n->sq_pi, SQ_LOG_DEPTH) <<
                          SQ_LOG_STRIDE);
    struct kite_sq_wqe_hdr hdr = {
        .opcode = KITE_WQE_WRITE,
        .flags = KITE_WQE_F_SIGNALED,
        .num_sge = 1,
    };
    struct kite_wqe_raddr r;
    struct kite_sge sge;

    memset(&r, 0, sizeof(r));
    kr_set_le64(&r.remote_addr, MR_IOVA);
    kr_set_le32(&r.rkey, MR_KEY);
    kr_set_le64(&sge.addr, MR_IOVA);
    kr_set_le32(&sge.length, len);
    kr_set_le32(&sge.lkey, MR_KEY);
    memcpy(w, &hdr, sizeof(hdr));
    memcpy(w + sizeof(hdr), &r, sizeof(r));
    memcpy(w + sizeof(hdr) + sizeof(r), &sge, sizeof(sge));
    n->sq_pi++;
}

/* Deliver every frame on @n's outgoing wire to @peer. */
static void wire_deliver(Node *n, Node *peer)
{
    Wire *w = n->out;

    while (w->head != w->tail) {
        uint32_t i = w->head % WIRE_SLOTS;

        if (!kite_roce_rx(peer->e, w->slot[i], w->len[i])) {
            fprintf(stderr, "engine-bench: frame not taken\n");
            peer->failed = true;
        }
        w->head++;
    }
    /* Start over at the first slot: the wire's buffer stays in cache. */
    w->head = w->tail = 0;
}

static void node_run(Node *n)
{
    uint64_t t;

    if (n->deadline != KITE_ROCE_TIMER_OFF) {
        t = now_ns();
        if (t >= n->deadline) {
            n->deadline = KITE_ROCE_TIMER_OFF;
            kite_roce_qp_timer(n->qp);
        }
    }
    if (n->kicked) {
        n->kicked = false;
        if (kite_roce_run(n->e, RUN_BUDGET)) {
            n->kicked = true;
        }
    }
}

/*
 * Post WRITEs up to @msgs in all while the SQ has room (@posted so far,
 * @done of them complete), then ring once. Returns the new @posted.
 */
static uint32_t fill_sq(Node *a, uint32_t len, uint32_t posted,
                        uint32_t done, uint32_t msgs)
{
    uint32_t before = posted;

    while (posted < msgs && posted - done < (1u << SQ_LOG_DEPTH)) {
        post_write(a, len);
        posted++;
    }
    if (posted != before) {
        kite_roce_sq_doorbell(a->qp, a->sq_pi);
    }
    return posted;
}

/* Reap A's completions: how many, or -1 on a wrong one. */
static int reap(Node *a, uint32_t len)
{
    int done = 0;

    while (a->cq_ci != a->cq_pi) {
        const struct kite_cqe *c =
            &a->cq[kite_ring_slot(a->cq_ci++, CQ_LOG_DEPTH)];

        if (c->status != KITE_CQE_SUCCESS || c->opcode != KITE_CQE_WRITE ||
            kr_le32(&c->byte_len) != len) {
            fprintf(stderr, "engine-bench: CQE status %u opcode %u len %u\n",
                    c->status, c->opcode, kr_le32(&c->byte_len));
            return -1;
        }
        done++;
    }
    return done;
}

/*
 * Send @msgs WRITEs of @len bytes from A to B, keeping the SQ full, and
 * check their completions. Returns false on any wrong result.
 */
static bool run_writes(Node *a, Node *b, uint32_t len, uint32_t msgs)
{
    uint32_t posted = 0, done = 0;
    uint64_t spins = 0;

    while (done < msgs) {
        int got;

        posted = fill_sq(a, len, posted, done, msgs);
        node_run(a);
        wire_deliver(a, b);
        node_run(b);
        wire_deliver(b, a);
        got = reap(a, len);
        if (got < 0) {
            return false;
        }
        done += (uint32_t)got;
        if (a->failed || b->failed) {
            return false;
        }
        if (++spins > 1000ull * msgs + 1000000) {
            fprintf(stderr, "engine-bench: no progress (%u of %u done)\n",
                    done, msgs);
            return false;
        }
    }
    return true;
}

/* ---- one engine per thread ---- */

/* Hand every frame waiting on @n's incoming wire to its engine. */
static bool twire_deliver(Node *n)
{
    TWire *w = n->tin;
    uint32_t head = atomic_load_explicit(&w->head, memory_order_relaxed);
    uint32_t tail = atomic_load_explicit(&w->tail, memory_order_acquire);

    if (head == tail) {
        return false;
    }
    while (head != tail) {
        uint32_t i = head % TWIRE_SLOTS;

        if (!kite_roce_rx(n->e, w->slot[i], w->len[i])) {
            fprintf(stderr, "engine-bench: frame not taken\n");
            n->failed = true;
        }
        atomic_store_explicit(&w->head, ++head, memory_order_release);
    }
    return true;
}

/* node_run() once the outgoing wire has room for a whole run. */
static bool node_run_threaded(Node *n)
{
    bool was = n->kicked;

    if (!twire_room(n->tout, TWIRE_RUN_ROOM)) {
        return false;
    }
    node_run(n);
    return was;
}

/* B's thread: serve the wire and the engine until A is done. */
static void *node_thread(void *opaque)
{
    Node *n = opaque;
    unsigned idle = 0;
    uint64_t t0 = cpu_ns();

    while (!atomic_load_explicit(&twire_stop, memory_order_acquire)) {
        bool busy = twire_deliver(n);

        busy |= node_run_threaded(n);
        if (n->failed) {
            atomic_store(&twire_stop, true);
            break;
        }
        if (busy) {
            idle = 0;
        } else {
            twire_idle(++idle);
        }
    }
    n->thread_cpu_ns = cpu_ns() - t0;
    return NULL;
}

/*
 * run_writes() with B's engine on a thread of its own; A's runs on this
 * one. Returns false on any wrong result or a stall.
 */
static bool run_writes_threaded(Node *a, Node *b, uint32_t len,
                                uint32_t msgs)
{
    uint32_t posted = 0, done = 0;
    uint64_t last = 0;
    unsigned idle = 0;
    pthread_t tid;
    bool ok = true;

    a->thread_cpu_ns = cpu_ns();
    atomic_store(&twire_stop, false);
    if (pthread_create(&tid, NULL, node_thread, b)) {
        fprintf(stderr, "engine-bench: pthread_create failed\n");
        return false;
    }
    while (done < msgs) {
        bool busy;
        int got;

        posted = fill_sq(a, len, posted, done, msgs);
        busy = twire_deliver(a);
        busy |= node_run_threaded(a);
        got = reap(a, len);
        if (got < 0 || a->failed ||
            atomic_load_explicit(&twire_stop, memory_order_acquire)) {
            ok = false;
            break;
        }
        done += (uint32_t)got;
        if (got || busy) {
            idle = 0;
            last = 0;
            continue;
        }
        twire_idle(++idle);
        if (idle % TWIRE_SPINS == 0) {
            uint64_t t = now_ns();

            if (!last) {
                last = t;
            } else if (t - last > STALL_NS) {
                fprintf(stderr, "engine-bench: no progress (%u of %u "
                        "done)\n", done, msgs);
                ok = false;
                break;
            }
        }
    }
    atomic_store(&twire_stop, true);
    a->thread_cpu_ns = cpu_ns() - a->thread_cpu_ns;
    pthread_join(tid, NULL);
    return ok && !b->failed;
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
    uint32_t x = seed * 2654435761u + 1;
    size_t i;

    for (i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        p[i] = (uint8_t)x;
    }
}

static bool counters_clean(const Node *n)
{
    const struct kite_roce_counters *c = kite_roce_counters(n->e);

    if (c->retransmits || c->timeouts || c->icrc_errors || c->rx_dropped ||
        c->naks_sent || c->naks_rcvd) {
        fprintf(stderr, "engine-bench: retransmits %llu timeouts %llu "
                "icrc_errors %llu rx_dropped %llu naks %llu/%llu\n",
                (unsigned long long)c->retransmits,
                (unsigned long long)c->timeouts,
                (unsigned long long)c->icrc_errors,
                (unsigned long long)c->rx_dropped,
                (unsigned long long)c->naks_sent,
                (unsigned long long)c->naks_rcvd);
        return false;
    }
    return true;
}

/* Best of @repeats passes of memcpy of @len bytes, @msgs times: MB/s. */
static double memcpy_mbs(uint8_t *dst, const uint8_t *src, uint32_t len,
                         uint32_t msgs, unsigned repeats)
{
    double best = 0;
    unsigned r;
    uint32_t i;

    for (r = 0; r < repeats; r++) {
        uint64_t t0 = cpu_ns(), t;

        for (i = 0; i < msgs; i++) {
            memcpy(dst, src, len);
            /* Keep the copies: the compiler may not fold them. */
            __asm__ volatile("" : : "r"(dst) : "memory");
        }
        t = cpu_ns() - t0;
        if (t && (double)len * msgs / (t / NS_PER_S) / BYTES_PER_MB > best) {
            best = (double)len * msgs / (t / NS_PER_S) / BYTES_PER_MB;
        }
    }
    return best;
}

static int bench_mtu(uint8_t mtu, uint32_t len, uint32_t msgs,
                     unsigned repeats, bool threaded)
{
    Node *a = &nodes[0], *b = &nodes[1];
    double best = 0, mc, on_a = 0, on_b = 0;
    unsigned r;

    node_init(a, 0, len, threaded);
    node_init(b, 1, len, threaded);
    node_connect(a, b, mtu);
    node_connect(b, a, mtu);
    for (r = 0; r < repeats; r++) {
        uint64_t t0, t;
        bool ok;

        /* A new pattern each pass: stale bytes cannot pass the check. */
        fill(a->mem, len, r + 1);
        memset(b->mem, 0, len);
        if (threaded) {
            t0 = now_ns();
            ok = run_writes_threaded(a, b, len, msgs);
            t = now_ns() - t0;
        } else {
            t0 = cpu_ns();
            ok = run_writes(a, b, len, msgs);
            t = cpu_ns() - t0;
        }
        if (!ok) {
            return 1;
        }
        if (memcmp(a->mem, b->mem, len)) {
            fprintf(stderr, "engine-bench: data differs after pass %u\n", r);
            return 1;
        }
        if (t && (double)len * msgs / (t / NS_PER_S) / BYTES_PER_MB > best) {
            best = (double)len * msgs / (t / NS_PER_S) / BYTES_PER_MB;
            on_a = 100.0 * (double)a->thread_cpu_ns / (double)t;
            on_b = 100.0 * (double)b->thread_cpu_ns / (double)t;
        }
    }
    if (!counters_clean(a) || !counters_clean(b)) {
        return 1;
    }
    mc = memcpy_mbs(b->mem, a->mem, len, msgs, repeats);
    printf("engine-bench: RDMA WRITE %u B, RoCE MTU %u%s: engine %.0f MB/s, "
           "memcpy %.0f MB/s, engine/memcpy %.1f%%\n", len,
           kite_mtu_bytes(mtu),
           threaded ? ", 2 threads (one per engine, as two QEMUs; "
                      "wall clock)" : "",
           best, mc, mc ? 100.0 * best / mc : 0.0);
    if (threaded) {
        /* Below ~100% each: the threads did not have a core each. */
        printf("engine-bench:   threads on a CPU: A %.0f%%, B %.0f%% of the "
               "wall time\n", on_a, on_b);
    }
    fflush(stdout);
    node_free(a);
    node_free(b);
    return 0;
}

/* -k: the ICRC's speed by length, for each implementation. */
static int bench_crc(void)
{
    static const size_t lens[] = {
        64, 128, 256, 512, 1024, 1076, 2048, 4096, 4148, 8192,
    };
    static const char *const names[] = {
        [KITE_ROCE_CRC_TABLE] = "table",
        [KITE_ROCE_CRC_CLMUL] = "clmul",
        [KITE_ROCE_CRC_VCLMUL] = "vclmul",
    };
    enum kite_roce_crc_impl impl;
    size_t l, k, iters, len;
    uint8_t *buf = xalloc(CRC_BENCH_MAX + KITE_ETH_HLEN);
    uint8_t *ip = buf + KITE_ETH_HLEN;
    uint8_t mask[KITE_ROCE_CRC_FIRST_LEN] = { [1] = 0xff };

    fill(buf, CRC_BENCH_MAX + KITE_ETH_HLEN, 1);
    for (impl = KITE_ROCE_CRC_TABLE; impl <= KITE_ROCE_CRC_VCLMUL; impl++) {
        if (!kite_roce_crc_select(impl)) {
            continue;
        }
        printf("engine-bench: ICRC %-6s GB/s by length:", names[impl]);
        for (l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
            double best = 0;
            unsigned r;

            len = lens[l];
            iters = CRC_BENCH_BYTES / len;
            for (r = 0; r < DEF_REPEATS; r++) {
                uint64_t t0 = cpu_ns(), t;
                uint32_t c = 0;

                for (k = 0; k < iters; k++) {
                    c = kite_roce_crc32_or(c, ip, len, mask);
                }
                __asm__ volatile("" : : "r"(c));
                t = cpu_ns() - t0;
                if (t && (double)len * iters / t > best) {
                    best = (double)len * iters / t;
                }
            }
            printf(" %zu:%.1f", len, best);
        }
        printf("\n");
    }
    free(buf);
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: engine-bench [-s SIZE] [-n MESSAGES] "
            "[-r REPEATS] [-m 256|512|1024|2048|4096]... "
            "[-c table|clmul|vclmul] [-t 1|2] [-C] | -k\n");
    exit(2);
}

int main(int argc, char **argv)
{
    uint32_t len = DEF_SIZE, msgs = DEF_MSGS;
    unsigned repeats = DEF_REPEATS, nmtu = 0, i, threads = 0;
    uint8_t mtus[MAX_MTUS];
    int c, rc = 0;

    static const char *const crc_names[] = {
        [KITE_ROCE_CRC_TABLE] = "table",
        [KITE_ROCE_CRC_CLMUL] = "clmul",
        [KITE_ROCE_CRC_VCLMUL] = "vclmul",
    };
    enum kite_roce_crc_impl crc;

    while ((c = getopt(argc, argv, "s:n:r:m:c:t:kC")) != -1) {
        unsigned long v = optarg ? strtoul(optarg, NULL, 0) : 0;
        uint8_t m;

        switch (c) {
        case 's':
            if (!v || v > KITE_MAX_MSG_SIZE) {
                usage();
            }
            len = (uint32_t)v;
            break;
        case 'n':
            if (!v || v > 100000000ul) {
                usage();
            }
            msgs = (uint32_t)v;
            break;
        case 'r':
            if (!v || v > 100) {
                usage();
            }
            repeats = (unsigned)v;
            break;
        case 'm':
            for (m = KITE_MTU_256; m <= KITE_MTU_4096; m++) {
                if (kite_mtu_bytes(m) == v) {
                    break;
                }
            }
            if (m > KITE_MTU_4096 || nmtu == MAX_MTUS) {
                usage();
            }
            mtus[nmtu++] = m;
            break;
        case 'k':
            return bench_crc();
        case 'C':
            /* The engine copies, then CRCs each frame whole. */
            ops.mem_read_crc = NULL;
            break;
        case 't':
            if (v != 1 && v != 2) {
                usage();
            }
            threads = (unsigned)v;
            break;
        case 'c':
            for (crc = KITE_ROCE_CRC_TABLE; crc <= KITE_ROCE_CRC_VCLMUL;
                 crc++) {
                if (!strcmp(optarg, crc_names[crc])) {
                    break;
                }
            }
            if (crc > KITE_ROCE_CRC_VCLMUL) {
                usage();
            }
            if (!kite_roce_crc_select(crc)) {
                fprintf(stderr, "engine-bench: no %s CRC on this CPU\n",
                        optarg);
                return 2;
            }
            break;
        default:
            usage();
        }
    }
    crc = kite_roce_crc_current();
    printf("engine-bench: ICRC by %s, %s\n", crc_names[crc],
           ops.mem_read_crc ? "sent payloads CRCed as they are copied in" :
                              "copy, then CRC (-C)");
    if (!nmtu) {
        mtus[nmtu++] = KITE_MTU_1024;
        mtus[nmtu++] = KITE_MTU_4096;
    }
    for (i = 0; i < nmtu && !rc; i++) {
        if (threads != 2) {
            rc = bench_mtu(mtus[i], len, msgs, repeats, false);
        }
        if (threads != 1 && !rc) {
            rc = bench_mtu(mtus[i], len, msgs, repeats, true);
        }
    }
    if (rc) {
        printf("engine-bench: FAILED (wrong result, see above)\n");
    }
    return rc;
}
