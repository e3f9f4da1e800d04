/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 transport engine: receive dispatch. Parses a frame once,
 * decides whether it is for this port, counts it, resolves its
 * destination QP through the engine's QP number index, checks what every
 * packet of a QP must satisfy (opcode, P_Key, transport, source address,
 * state) and hands requests to the responder and responses to the
 * completer.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include "kite_roce_int.h"

/* Every P_Key bit but the membership bit must be set (default P_Key). */
#define KR_PKEY_BASE_MASK       0x7fff

/* The BTH transport a QP's packets carry. */
static uint8_t kr_qp_transport(const KiteRoceQp *qp)
{
    switch (qp->cfg.type) {
    case KITE_QPT_RC:
        return KITE_BTH_RC;
    case KITE_QPT_UC:
        return KITE_BTH_UC;
    default:
        return KITE_BTH_UD;
    }
}

/* Whether packet @p may reach @qp at all, whatever its state. */
static bool kr_rx_qp_ok(const KiteRoceQp *qp, const struct kite_roce_pkt *p,
                        uint32_t hdrs)
{
    return (hdrs & KITE_OPF_VALID) &&
           (p->pkey & KR_PKEY_BASE_MASK) == KR_PKEY_BASE_MASK &&
           KITE_BTH_TRANSPORT(p->opcode) == kr_qp_transport(qp) &&
           (kr_is_ud(qp) || !memcmp(p->sgid, qp->path.dgid, 16));
}

/* Whether @qp takes requests in its state now. */
static bool kr_rx_req_state_ok(const KiteRoceQp *qp)
{
    return qp->state == KITE_QPS_RTR || qp->state == KITE_QPS_RTS ||
           qp->state == KITE_QPS_SQD || qp->state == KITE_QPS_SQE;
}

/*
 * A frame for the port: counted, and the ones that did not parse counted
 * as ICRC errors or drops. Whether the frame parsed (@r is OK).
 */
static bool kr_rx_count(KiteRoce *e, enum kite_roce_parse_result r,
                        size_t len)
{
    e->cnt.rx_packets++;
    e->cnt.rx_bytes += len;
    if (r == KITE_ROCE_OK) {
        return true;
    }
    if (r == KITE_ROCE_BAD_ICRC) {
        e->cnt.icrc_errors++;
    } else {
        e->cnt.rx_dropped++;
    }
    return false;
}

/*
 * A frame to multicast GID @p->dgid: not the engine's unless a group has
 * that GID. A UD SEND to QP KITE_MCAST_QPN is copied to every QP of the
 * group; each copy is checked and received (or dropped, counted) as a
 * unicast datagram to that QP would be.
 */
static bool kr_mcast_rx(KiteRoce *e, const struct kite_roce_pkt *p,
                        enum kite_roce_parse_result r, size_t len)
{
    KrMcastGroup *g = kr_mcast_find(e, p->dgid);
    uint32_t hdrs, i;
    KiteRoceQp *qp;

    if (!g) {
        return false;
    }
    if (!kr_rx_count(e, r, len)) {
        return true;
    }
    hdrs = kite_roce_op_hdrs(p->opcode);
    if (p->dqpn != KITE_MCAST_QPN || !(hdrs & KITE_OPF_REQUEST) ||
        KITE_BTH_TRANSPORT(p->opcode) != KITE_BTH_UD) {
        e->cnt.rx_dropped++;
        return true;
    }
    for (i = 0; i < g->nqp; i++) {
        qp = g->qp[i];
        if (!kr_rx_qp_ok(qp, p, hdrs) || !kr_rx_req_state_ok(qp)) {
            e->cnt.rx_dropped++;
            e->cnt.mcast_dropped++;
            continue;
        }
        qp->cnt.rx_packets++;
        qp->cnt.rx_bytes += len;
        if (kr_resp_ud(qp, p)) {
            e->cnt.mcast_rx++;
        } else {
            e->cnt.mcast_dropped++;
        }
        if (kr_qp_has_work(qp)) {
            kr_qp_ready(qp);
            e->ops->kick(e->opaque);
        }
    }
    return true;
}

bool kite_roce_rx(KiteRoce *e, const uint8_t *frame, size_t len)
{
    struct kite_roce_pkt p;
    enum kite_roce_parse_result r;
    KiteRoceQp *qp;
    uint32_t hdrs;

    r = kite_roce_parse(frame, len, &p);
    if (r == KITE_ROCE_NOT_ROCE) {
        return false;
    }
    if (kite_gid_is_mcast(p.dgid)) {
        return kr_mcast_rx(e, &p, r, len);
    }
    /*
     * A malformed frame or one with a bad ICRC has its addresses parsed
     * too: one for another host's address is not the engine's.
     */
    if (!e->ops->gid_is_local(e->opaque, p.dgid)) {
        return false;
    }
    if (!kr_rx_count(e, r, len)) {
        return true;
    }
    hdrs = kite_roce_op_hdrs(p.opcode);
    qp = kite_roce_qp_find(e, p.dqpn);
    if (!qp || !kr_rx_qp_ok(qp, &p, hdrs)) {
        e->cnt.rx_dropped++;
        return true;
    }
    qp->cnt.rx_packets++;
    qp->cnt.rx_bytes += len;
    if (hdrs & KITE_OPF_REQUEST) {
        if (!kr_rx_req_state_ok(qp)) {
            e->cnt.rx_dropped++;
            return true;
        }
        if (kr_is_ud(qp)) {
            kr_resp_ud(qp, &p);
        } else {
            kr_resp_rx(qp, &p);
        }
    } else {
        if (qp->state != KITE_QPS_RTS && qp->state != KITE_QPS_SQD &&
            qp->state != KITE_QPS_SQE) {
            e->cnt.rx_dropped++;
            return true;
        }
        kr_comp_rx(qp, &p);
    }
    if (kr_qp_has_work(qp)) {
        kr_qp_ready(qp);
        e->ops->kick(e->opaque);
    }
    return true;
}
