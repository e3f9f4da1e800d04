/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 NIC device model: state shared by the model's files.
 *
 * kite.c        PCI/QOM glue, BAR0 registers, BAR2 doorbells, reset, enable
 * kite_admin.c  admin queue and command engine, object tables
 * kite_eq.c     async and completion event queues
 * kite_eth.c    Ethernet port: netdev, TX/RX rings, link, interrupt
 * kite_mr.c     page buffer lists, MR table, key lookup and translation
 * kite_frwr.c   fast-register MRs: ALLOC_MR, REG_MR and LOCAL_INV WQEs,
 *               remote invalidation
 * kite_mw.c     memory windows: ALLOC_MW, DEALLOC_MW, BIND_MW WQEs
 * kite_cq.c     completion queues, the CQ doorbell and CQE posting
 * kite_srq.c    shared receive queues, the SRQ doorbell and WQE hand-out
 * kite_qp.c     queue pairs, the QP state machine and QP statistics
 * kite_dbrec.c  doorbell records: producer and consumer indexes in memory
 * kite_engine.c the RoCEv2 engine (roce/) glue: its callbacks, bottom half,
 *               per-QP timers and re-entrancy guard (kite_engine.h)
 * kite_wire.c   the wire: transmit and receive fault injection, loopback
 *               and the port's receive queue (kite_wire.h)
 *
 * The device ABI (registers, rings, commands) is include/kite/kite_hw.h of
 * the Kite repository.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef HW_NET_KITE_H
#define HW_NET_KITE_H

#include "hw/pci/pci.h"
#include "net/net.h"
#include "qemu/queue.h"
#include "qemu/timer.h"
#include "qemu/units.h"
#include "qom/object.h"
#include "kite/kite_hw.h"
#include "kite_limits.h"
#include "kite_table.h"
#include "kite_engine.h"
#include "kite_wire.h"

#define TYPE_KITE "kite"
OBJECT_DECLARE_SIMPLE_TYPE(KiteState, KITE)

/* Firmware version reported by QUERY_DEVICE: major << 16 | minor. */
#define KITE_MODEL_FW_VERSION   0x00010000u
/*
 * KITE_DEV_CAP_* the model implements: the RoCEv2 engine runs RC and UC
 * (SEND, WRITE, READ, atomics) and UD (SEND, SEND with immediate, Q_Key
 * checks, the 40-byte GRH area of UD receives) over IPv4 and IPv6, and
 * the GSI QP (QPN 1) with it (hardware.rst): KITE_DEV_CAP_UD is set.
 * Fast registration, invalidation and windows (kite_frwr.c, kite_mw.c)
 * give KITE_DEV_CAP_MEM_MGT and KITE_DEV_CAP_MW, shared receive queues
 * (kite_srq.c) KITE_DEV_CAP_SRQ.
 */
#define KITE_MODEL_CAP_FLAGS    (KITE_DEV_CAP_RC | KITE_DEV_CAP_UC | \
                                 KITE_DEV_CAP_UD | KITE_DEV_CAP_ATOMIC | \
                                 KITE_DEV_CAP_IPV6 | KITE_DEV_CAP_MEM_MGT | \
                                 KITE_DEV_CAP_MW | KITE_DEV_CAP_SRQ | \
                                 KITE_DEV_CAP_MCAST)
/* Default Ethernet MTU after reset. */
#define KITE_MODEL_DEF_MTU      1500u

/*
 * A ring (or buffer) the guest places at @base for @size bytes: non-zero,
 * KITE_RING_ALIGN aligned, and not wrapping past the end of the 64-bit DMA
 * address space. @size must be non-zero.
 */
static inline bool kite_ring_base_valid(uint64_t base, uint64_t size)
{
    return base && QEMU_IS_ALIGNED(base, KITE_RING_ALIGN) &&
           base + size - 1 >= base;
}

/* One EQ: EQ 0 is the async EQ (registers), 1.. are completion EQs. */
typedef struct KiteEq {
    bool valid;
    uint64_t base;
    uint8_t log_depth;
    uint16_t vector;
    uint32_t pi;                /* entries written */
    uint32_t ci;                /* last consumer index the driver reported */
    bool armed;
    uint64_t dropped;           /* events lost because the EQ was full */
    uint32_t cq_refs;           /* CQs that report to this EQ */
} KiteEq;

/* A protection domain. */
typedef struct KitePd {
    bool valid;
    uint32_t owner;
    uint32_t refs;              /* objects (MRs, QPs) that use it */
} KitePd;

/* A user context; its number is also its BAR2 doorbell page. */
typedef struct KiteUctx {
    bool valid;
    uint32_t refs;              /* objects owned by it */
} KiteUctx;

/*
 * A validated page buffer list (struct kite_pbl_desc in host order). For
 * rings only the descriptor is kept: level 1/2 entries are read from guest
 * memory with pci_dma_read() whenever an address is translated. MRs keep a
 * copy of their entries (KiteMr.pages) when it fits the cache budget.
 */
typedef struct KitePbl {
    uint64_t addr;
    uint32_t npages;
    uint8_t page_shift;
    uint8_t level;
} KitePbl;

/*
 * PDs are numbered 1..KITE_DEF_MAX_PD, CQs 1..KITE_DEF_MAX_CQ and MR key
 * indexes 1..KITE_DEF_MAX_MR, the lowest free first: 0 is never a valid
 * handle or key. The number is the index in the object's table.
 */
#define KITE_PD_FIRST   1
#define KITE_CQ_FIRST   1
#define KITE_MR_FIRST   1
#define KITE_SRQ_FIRST  1
/*
 * QP numbers: 0 unused, KITE_GSI_QPN the GSI QP, others a slot of the QP
 * table (the lowest free from KITE_QPN_FIRST) in the low KITE_QP_SLOT_BITS
 * and, above it, how many QPs used the slot before (modulo 2^5): a
 * destroyed QP's number comes back only after its slot was used 32 more
 * times. The slots hold KITE_DEF_MAX_QP QPs besides the GSI QP.
 */
#define KITE_QPN_FIRST      2
#define KITE_QPN_MAX        KITE_DB_NUM_MASK
#define KITE_QP_SLOT_BITS   KITE_DEF_QPN_SLOT_BITS
#define KITE_QP_SLOTS       (1u << KITE_QP_SLOT_BITS)

typedef struct KiteCq {
    bool valid;
    uint32_t owner;             /* acting context that created it */
    uint32_t refs;              /* QP queues that complete into it */
    uint16_t eqn;
    uint8_t log_depth;
    KitePbl ring;
    uint32_t pi;                /* CQEs written */
    uint32_t ci;                /* last consumer index of the doorbell */
    uint8_t arm;                /* KITE_DB_CQ_ARM_* of the pending arm */
    bool error;                 /* overflow or bad ring, until destroyed */
    uint64_t dbrec;             /* struct kite_cq_dbrec address, 0: none */
} KiteCq;

/* A shared receive queue (kite_srq.c). */
typedef struct KiteSrq {
    bool valid;
    bool error;                 /* bad doorbell or WQE: hands out nothing */
    uint32_t srqn;
    uint32_t owner;             /* acting context that created it */
    uint32_t pdn;
    uint32_t refs;              /* QPs that receive from it */
    uint8_t log_depth, log_stride;
    KitePbl ring;
    uint32_t pi;                /* last doorbell */
    uint32_t ci;                /* WQEs handed to QPs */
    uint16_t head;              /* slot of the next WQE to hand out */
    uint32_t limit;             /* armed limit, 0: not armed */
} KiteSrq;

/* A QP's doorbell record (kite_dbrec.c); poll[] is indexed by "is RQ". */
typedef struct KiteQpDbrec {
    uint64_t addr;              /* struct kite_qp_dbrec address, 0: none */
    bool poll[2];               /* sq_poll/rq_poll as last written */
    bool listed;                /* on KiteState.dbrec_polling */
    uint32_t pass;              /* the last kite_dbrec_service() that saw it */
} KiteQpDbrec;

typedef struct KiteQp {
    struct KiteState *dev;
    bool valid;
    uint32_t qpn;
    uint32_t owner;
    uint8_t type;               /* enum kite_qp_type */
    uint8_t flags;              /* KITE_QP_FLAG_* */
    uint8_t sq_log_depth, sq_log_stride;
    uint8_t rq_log_depth, rq_log_stride;
    uint32_t pdn, send_cqn, recv_cqn;
    uint32_t srqn;              /* KITE_QP_FLAG_SRQ: receives come from it */
    KitePbl sq, rq;
    uint32_t sq_pi, rq_pi;      /* last doorbells (register or record) */
    KiteQpDbrec dbrec;
    struct kite_qp_attr attr;   /* little-endian, as QUERY_QP returns it */
    KiteRoceQp *eqp;            /* transport state in the RoCEv2 engine */
    uint32_t mw_bound;          /* type-2B windows bound to it */
    QEMUTimer *timer;           /* the engine's per-QP timer */
} KiteQp;

/*
 * What an MR table entry holds: MRs and memory windows share the key
 * space (the key index names either).
 */
typedef enum KiteMrKind {
    KITE_MR_KIND_REGULAR,       /* REG_MR command: valid until DEREG_MR */
    KITE_MR_KIND_FAST,          /* ALLOC_MR: free or valid (REG_MR WQE) */
    KITE_MR_KIND_MW1,           /* window type 1: unbound or bound */
    KITE_MR_KIND_MW2,           /* window type 2B: free or bound to a QP */
} KiteMrKind;

typedef struct KiteMr {
    bool valid;                 /* the table entry is allocated */
    bool live;                  /* valid (or bound): the key may be used */
    uint8_t kind;               /* KiteMrKind */
    bool dma_all;               /* KITE_MR_DMA_ALL: identity, whole space */
    uint32_t key;
    uint32_t owner;
    uint32_t pdn;
    uint32_t access;            /* KITE_ACCESS_* */
    uint64_t iova;              /* windows: the bound range */
    uint64_t length;
    KitePbl pbl;
    /*
     * The page addresses of a level 1 or 2 list as validated at REG_MR,
     * pbl.npages of them, or NULL: the list is read at each translation.
     * A fast-register MR has room for max_pages from ALLOC_MR on.
     */
    uint64_t *pages;
    uint32_t cached;            /* entries pages[] has room for */
    uint32_t max_pages;         /* fast-register MRs: ALLOC_MR's max_pages */
    uint32_t mw_bound;          /* MRs: windows bound to it */
    uint32_t mw_mr;             /* bound windows: key index of their MR */
    uint32_t mw_qpn;            /* bound type-2B windows: their QP */
} KiteMr;

/* KITE_ACCESS_* bits an MR may have, and the remote ones. */
#define KITE_ACCESS_REMOTE      (KITE_ACCESS_REMOTE_WRITE | \
                                 KITE_ACCESS_REMOTE_READ | \
                                 KITE_ACCESS_REMOTE_ATOMIC)
#define KITE_ACCESS_ALL         (KITE_ACCESS_LOCAL_WRITE | \
                                 KITE_ACCESS_REMOTE | KITE_ACCESS_MW_BIND)

/*
 * Host memory all MRs' page copies may take at once (8 bytes per page:
 * 32 GiB of registrations in 4 KiB pages, 16 TiB in 2 MiB pages): the
 * same guest pages can be registered again and again, so the copies need
 * a bound of their own; MRs beyond it translate from guest memory.
 */
#define KITE_MR_CACHE_BUDGET    (64 * MiB)

/* One physically contiguous piece of an MR access. */
typedef struct KiteDmaRange {
    uint64_t addr;
    uint64_t len;
} KiteDmaRange;

/* Most DMA ranges one x-mr-map lookup reports. */
#define KITE_MR_PROBE_MAX_RANGES    16
/*
 * Longest x-mr-map lookup: 4096 pages of 4 KiB, so that one qom-get reads
 * a bounded number of page-list entries whatever the MR looks like.
 */
#define KITE_MR_PROBE_MAX_LEN       (16 * MiB)

/* A kite_mr_map() lookup as the test-only x-mr-map property holds it. */
typedef struct KiteMrProbe {
    uint32_t key;
    uint32_t pdn;
    uint32_t access;            /* KITE_ACCESS_*, 0 for a local read */
    uint32_t max_ranges;        /* 1 .. KITE_MR_PROBE_MAX_RANGES */
    uint32_t qpn;               /* the accessing QP (type-2B windows) */
    uint64_t addr;
    uint64_t len;
} KiteMrProbe;

typedef struct KiteGid {
    bool valid;
    uint8_t gid[16];
    uint8_t type;               /* enum kite_gid_type */
} KiteGid;

/* Ethernet ring: registers as written, and the latched ring. */
typedef struct KiteEthRing {
    uint32_t base_lo, base_hi, log_depth_reg;   /* registers */
    uint64_t base;                              /* latched on enable */
    uint8_t log_depth;
    uint32_t pi;                /* last doorbell */
    uint32_t ci;                /* descriptors completed */
} KiteEthRing;

/* Host-order counters behind QUERY_STATS. */
typedef struct KiteCounters {
    uint64_t eth_tx_packets, eth_tx_bytes, eth_tx_errors;
    uint64_t eth_rx_packets, eth_rx_bytes, eth_rx_dropped;
    uint64_t eq_dropped;
    uint64_t db_rejected;       /* doorbells for objects not owned/known */
    uint64_t wire_dropped;      /* fault injection: RoCEv2 drops, TX+RX */
    uint64_t roce_rx_dropped;   /* device RX queue overflow (not the engine) */
    uint64_t db_mmio;           /* SQ/RQ/CQ doorbell registers written */
    uint64_t db_rec_reads;      /* doorbell-record indexes read */
} KiteCounters;

/*
 * Frames the Ethernet RX ring had no buffer for (flushed into the ring on
 * RX_DB); RoCEv2 frames never wait here.
 */
#define KITE_ETH_BACKLOG_MAX    256

struct KiteState {
    PCIDevice parent_obj;

    MemoryRegion regs;
    MemoryRegion db;
    NICState *nic;
    NICConf conf;

    /* Admin fault injection (test-only x-fault-* properties). */
    uint8_t fault_opcode;
    uint8_t fault_status;
    uint8_t fault_hang_opcode;
    /* The lookup the test-only x-mr-map property asks for (kite_mr.c). */
    KiteMrProbe mr_probe;
    /* MR page copies: budget (x-mr-cache-bytes, test only) and use. */
    uint64_t mr_cache_budget;
    uint64_t mr_cache_bytes;

    /* Device control. */
    uint32_t ctrl;
    uint32_t status;
    uint32_t fatal_code;

    /* Admin queue registers (as written) and latched state. */
    uint32_t aq_base_lo, aq_base_hi, aq_log_depth_reg;
    uint32_t acq_base_lo, acq_base_hi, acq_log_depth_reg;
    uint32_t aeq_base_lo, aeq_base_hi, aeq_log_depth_reg;
    uint64_t aq_base, acq_base;
    uint8_t aq_log_depth, acq_log_depth;
    uint32_t aq_pi;             /* last doorbell */
    uint32_t aq_ci;             /* commands consumed */
    uint32_t acq_pi;            /* completions written */
    bool aq_hung;               /* x-fault-hang-opcode seen: no answers */
    QEMUBH *aq_bh;
    /* The admin queue's work (x-admin-work, test only); never reset. */
    uint64_t pbl_entries_read;  /* page-list entries read by commands */
    uint64_t aq_yields;         /* runs that left commands for the next */

    /* Event queues, KITE_DEF_MAX_EQ of them. */
    KiteEq eq[KITE_DEF_MAX_EQ];

    /*
     * Object tables: up to the capability registers' counts, memory for
     * what is in use (kite_table.h). Indexed by PD number, CQ number, QP
     * slot and MR key index.
     */
    KiteUctx uctx[KITE_MAX_UCTX + 1];   /* index 0 unused (kernel) */
    KiteTable pd_tab, cq_tab, qp_tab, mr_tab, srq_tab;
    uint32_t num_uctx, num_pd, num_cq, num_qp, num_mr, num_mw, num_srq;
    /* Test only (x-max-objects): fewer PDs, CQs, QPs, MRs, MWs; 0: all */
    uint32_t max_objects;
    KiteGid gid[KITE_DEF_MAX_GID];

    /* Port. */
    uint8_t mac[6];
    uint32_t eth_mtu;
    bool link_up;

    /* Ethernet rings. */
    KiteEthRing tx, rx;
    uint32_t eth_ctrl;
    bool eth_irq_armed;
    bool eth_irq_pending;
    QEMUBH *tx_bh;
    uint8_t tx_buf[KITE_ETH_MAX_FRAME];         /* frame being sent */
    KiteFrameQueue eth_backlog; /* frames waiting for an RX buffer */
    uint32_t eth_backlog_len;

    /* QP numbers whose doorbell records are polled (kite_dbrec.c). */
    GArray *dbrec_polling;
    uint32_t dbrec_pass;        /* kite_dbrec_service() passes */

    /* RoCEv2 engine and the wire between it and the port. */
    KiteEngine eng;
    KiteWire wire;

    KiteCounters cnt;
};

/* kite.c */
void kite_fatal(KiteState *s, uint32_t code);
void kite_irq(KiteState *s, unsigned vector);
bool kite_io_enter(KiteState *s);
void kite_io_leave(KiteState *s, bool was);
bool kite_dma_is_ram(PCIDevice *pci, dma_addr_t addr, dma_addr_t len,
                     bool is_write);
bool kite_running(KiteState *s);
uint32_t kite_cap(hwaddr reg);

/* Result of one admin command: the completion's out[] and syndrome. */
typedef struct KiteCmdResult {
    uint32_t out[ARRAY_SIZE(((struct kite_aq_cqe *)NULL)->out)];
    uint32_t syndrome;
} KiteCmdResult;

typedef uint8_t (*KiteCmdFn)(KiteState *s, const struct kite_aq_cmd *cmd,
                             KiteCmdResult *res);

/* kite_admin.c */
uint8_t kite_out_write(KiteState *s, const struct kite_aq_out_buf *ob,
                       const void *data, uint32_t len, KiteCmdResult *res);
KitePd *kite_pd_get(KiteState *s, uint32_t pdn, uint32_t actor,
                    uint8_t *status);
uint8_t kite_bad_param(const char *what, uint64_t val);
bool kite_obj_room(KiteState *s, uint32_t num, uint32_t max);
void kite_admin_init(KiteState *s);
void kite_admin_class_init(ObjectClass *klass);
void kite_admin_cleanup(KiteState *s);
void kite_admin_reset(KiteState *s);
bool kite_admin_enable(KiteState *s);
void kite_admin_doorbell(KiteState *s, uint32_t pi);
void kite_admin_bh(void *opaque);

/* kite_eq.c */
void kite_eq_reset(KiteState *s);
void kite_eq_setup(KiteState *s, uint32_t eqn, uint64_t base,
                   uint8_t log_depth, uint16_t vector);
void kite_eq_destroy(KiteState *s, uint32_t eqn);
void kite_eq_post(KiteState *s, uint32_t eqn, uint8_t type,
                  uint32_t data, uint32_t data2);
void kite_eq_doorbell(KiteState *s, uint32_t page, uint64_t val);

/* kite_mr.c */
uint8_t kite_pbl_load(KiteState *s, const struct kite_pbl_desc *d,
                      uint64_t min_bytes, uint64_t max_bytes, KitePbl *pbl);
bool kite_pbl_translate(KiteState *s, const KitePbl *pbl, uint64_t off,
                        uint64_t *dma, uint64_t *contig);
uint8_t kite_mr_map(KiteState *s, uint32_t key, uint32_t pdn, uint32_t qpn,
                    uint32_t access, uint64_t addr, uint64_t len,
                    KiteDmaRange *ranges, unsigned max_ranges,
                    unsigned *nranges);
KiteMr *kite_mr_slot(KiteState *s, uint32_t index);
bool kite_mr_is_window(const KiteMr *mr);
bool kite_mr_access_ok(uint32_t access);
bool kite_mr_pages_ok(uint64_t iova, uint64_t length, uint8_t shift,
                      uint64_t npages);
bool kite_pbl_entry_ok(uint64_t e, uint8_t shift);
bool kite_range_ok(uint64_t addr, uint64_t len);
bool kite_mr_covers(const KiteMr *mr, uint64_t addr, uint64_t len);
bool kite_mr_cache_room(KiteState *s, uint64_t bytes);
void kite_mr_uncache(KiteState *s, KiteMr *mr);
KiteMr *kite_mr_new(KiteState *s, uint8_t kind, KitePd *pd, uint32_t pdn,
                    uint32_t actor, uint8_t variant);
void kite_mr_release(KiteState *s, KiteMr *mr);
uint8_t kite_cmd_reg_mr(KiteState *s, const struct kite_aq_cmd *cmd,
                        KiteCmdResult *res);
uint8_t kite_cmd_rereg_mr(KiteState *s, const struct kite_aq_cmd *cmd,
                          KiteCmdResult *res);
uint8_t kite_cmd_dereg_mr(KiteState *s, const struct kite_aq_cmd *cmd,
                          KiteCmdResult *res);
void kite_mr_drop_all(KiteState *s);

/* kite_frwr.c */
uint8_t kite_cmd_alloc_mr(KiteState *s, const struct kite_aq_cmd *cmd,
                          KiteCmdResult *res);
uint8_t kite_frwr_reg(KiteState *s, KiteQp *qp,
                      const struct kite_wqe_reg_mr *w);
uint8_t kite_frwr_inv(KiteState *s, KiteQp *qp, uint32_t key, bool remote);

/* kite_mw.c */
uint8_t kite_cmd_alloc_mw(KiteState *s, const struct kite_aq_cmd *cmd,
                          KiteCmdResult *res);
uint8_t kite_cmd_dealloc_mw(KiteState *s, const struct kite_aq_cmd *cmd,
                            KiteCmdResult *res);
uint8_t kite_mw_bind(KiteState *s, KiteQp *qp,
                     const struct kite_wqe_bind_mw *w);
void kite_mw_invalidate(KiteState *s, KiteMr *mw);
void kite_mw_qp_destroyed(KiteState *s, KiteQp *qp);
KiteMr *kite_mw_resolve(KiteState *s, KiteMr *mw, uint32_t pdn, uint32_t qpn,
                        uint32_t access, uint64_t addr, uint64_t len,
                        uint8_t *status);
void kite_mr_instance_init(KiteState *s);
void kite_mr_class_init(ObjectClass *klass);

/* The PD @pdn, or NULL (no owner check). */
static inline KitePd *kite_pd_find(KiteState *s, uint32_t pdn)
{
    return kite_table_get(&s->pd_tab, pdn);
}

/* kite_cq.c */
KiteCq *kite_cq_find(KiteState *s, uint32_t cqn);
KiteCq *kite_cq_get(KiteState *s, uint32_t cqn, uint32_t actor,
                    uint8_t *status);
void kite_cq_doorbell(KiteState *s, uint32_t page, uint64_t val);
bool kite_cq_post(KiteState *s, uint32_t cqn, const struct kite_cqe *cqe);
uint8_t kite_cmd_create_cq(KiteState *s, const struct kite_aq_cmd *cmd,
                           KiteCmdResult *res);
uint8_t kite_cmd_modify_cq(KiteState *s, const struct kite_aq_cmd *cmd,
                           KiteCmdResult *res);
uint8_t kite_cmd_query_cq(KiteState *s, const struct kite_aq_cmd *cmd,
                          KiteCmdResult *res);
uint8_t kite_cmd_destroy_cq(KiteState *s, const struct kite_aq_cmd *cmd,
                            KiteCmdResult *res);

/* kite_srq.c */
KiteSrq *kite_srq_find(KiteState *s, uint32_t srqn);
KiteSrq *kite_srq_get(KiteState *s, uint32_t srqn, uint32_t actor,
                      uint8_t *status);
uint8_t kite_cmd_create_srq(KiteState *s, const struct kite_aq_cmd *cmd,
                            KiteCmdResult *res);
uint8_t kite_cmd_modify_srq(KiteState *s, const struct kite_aq_cmd *cmd,
                            KiteCmdResult *res);
uint8_t kite_cmd_query_srq(KiteState *s, const struct kite_aq_cmd *cmd,
                           KiteCmdResult *res);
uint8_t kite_cmd_destroy_srq(KiteState *s, const struct kite_aq_cmd *cmd,
                             KiteCmdResult *res);
void kite_srq_doorbell(KiteState *s, uint32_t page, uint64_t val);
bool kite_srq_take(KiteState *s, KiteSrq *srq, void *buf, uint32_t len,
                   uint16_t *slot);

/* kite_engine.c */
bool kite_wq_read(KiteState *s, const KitePbl *ring, uint64_t off,
                  void *buf, uint32_t len);

/* kite_mcast.c */
uint8_t kite_cmd_attach_mcast(KiteState *s, const struct kite_aq_cmd *cmd,
                              KiteCmdResult *res);
uint8_t kite_cmd_detach_mcast(KiteState *s, const struct kite_aq_cmd *cmd,
                              KiteCmdResult *res);

/* kite_qp.c */
KiteQp *kite_qp_find(KiteState *s, uint32_t qpn);
KiteQp *kite_qp_get(KiteState *s, uint32_t qpn, uint32_t actor,
                    uint8_t *status);
void kite_qp_doorbell(KiteState *s, uint32_t page, hwaddr off, uint64_t val);
uint8_t kite_cmd_create_qp(KiteState *s, const struct kite_aq_cmd *cmd,
                           KiteCmdResult *res);
uint8_t kite_cmd_modify_qp(KiteState *s, const struct kite_aq_cmd *cmd,
                           KiteCmdResult *res);
uint8_t kite_cmd_query_qp(KiteState *s, const struct kite_aq_cmd *cmd,
                          KiteCmdResult *res);
uint8_t kite_cmd_destroy_qp(KiteState *s, const struct kite_aq_cmd *cmd,
                            KiteCmdResult *res);

uint8_t kite_cmd_query_qp_stats(KiteState *s, const struct kite_aq_cmd *cmd,
                                KiteCmdResult *res);

/* kite_dbrec.c */
uint8_t kite_dbrec_check(KiteState *s, uint64_t addr, uint32_t size);
void kite_dbrec_doorbell(KiteState *s, KiteQp *qp, bool rq);
void kite_dbrec_service(KiteState *s);
uint32_t kite_dbrec_before_rx(KiteState *s, const uint8_t *frame,
                              size_t len);
void kite_dbrec_after_rx(KiteState *s, uint32_t qpn, const uint8_t *frame,
                         size_t len);
void kite_dbrec_qp_reset(KiteState *s, KiteQp *qp);
void kite_dbrec_cq_refresh(KiteState *s, KiteCq *cq, uint32_t cqn);
void kite_dbrec_cleanup(KiteState *s);

/* kite_eth.c */
extern NetClientInfo kite_net_info;
void kite_eth_reset(KiteState *s);
void kite_eth_backlog_drop(KiteState *s);
void kite_eth_backlog_flush(KiteState *s);
void kite_port_receive(KiteState *s, const uint8_t *buf, size_t size);
uint64_t kite_eth_read(KiteState *s, hwaddr addr, bool *found);
bool kite_eth_write(KiteState *s, hwaddr addr, uint32_t val);
void kite_eth_tx_bh(void *opaque);
void kite_eth_update_link(KiteState *s, bool notify);

#endif
