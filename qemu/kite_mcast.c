/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 NIC device model: UD multicast.
 *
 * ATTACH_MCAST and DETACH_MCAST. The group table itself is the RoCEv2
 * engine's (roce/kite_roce_mcast.c), which copies a received datagram
 * to every QP of its group; the port's receive filter asks it which
 * group Ethernet addresses to accept (kite_wire_receive()).
 *
 * Copyright (c) 2026 The Kite authors
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "kite.h"
#include "kite_engine.h"
#include "trace.h"

/* The engine's table is what the capability registers advertise. */
QEMU_BUILD_BUG_ON(KITE_DEF_MAX_MCAST_GRP > UINT16_MAX);
QEMU_BUILD_BUG_ON(KITE_DEF_MAX_MCAST_QP > UINT16_MAX);

/*
 * The QP a multicast command names, and the check of its GID: BAD_HANDLE,
 * PERMISSION (kite_qp_get()), BAD_PARAM for a GID outside the multicast
 * ranges or a QP that is not UD.
 */
static KiteQp *kite_mcast_qp(KiteState *s, const struct kite_aq_cmd *cmd,
                             uint8_t *status)
{
    const struct kite_cmd_mcast *c = &cmd->mcast;
    uint32_t qpn = le32_to_cpu(c->qpn);
    KiteQp *qp;

    qp = kite_qp_get(s, qpn, le32_to_cpu(cmd->hdr.uctx), status);
    if (!qp) {
        return NULL;
    }
    if (qp->type != KITE_QPT_UD || !qp->eqp) {
        *status = kite_bad_param("multicast QP type", qp->type);
        return NULL;
    }
    if (!kite_gid_is_mcast(c->gid)) {
        *status = kite_bad_param("multicast GID, first byte", c->gid[0]);
        return NULL;
    }
    return qp;
}

/*
 * ATTACH_MCAST (@attach) or DETACH_MCAST: the checks, then the engine's
 * table.
 */
static uint8_t kite_mcast_cmd(KiteState *s, const struct kite_aq_cmd *cmd,
                              bool attach)
{
    const uint8_t *gid = cmd->mcast.gid;
    KiteQp *qp;
    uint8_t st;

    qp = kite_mcast_qp(s, cmd, &st);
    if (!qp) {
        return st;
    }
    if (attach) {
        st = kite_roce_mcast_attach(qp->eqp, gid);
        trace_kite_mcast_attach(qp->qpn, gid[0], gid[15], st);
    } else {
        st = kite_roce_mcast_detach(qp->eqp, gid);
        trace_kite_mcast_detach(qp->qpn, gid[0], gid[15], st);
    }
    return st;
}

uint8_t kite_cmd_attach_mcast(KiteState *s, const struct kite_aq_cmd *cmd,
                              KiteCmdResult *res)
{
    return kite_mcast_cmd(s, cmd, true);
}

uint8_t kite_cmd_detach_mcast(KiteState *s, const struct kite_aq_cmd *cmd,
                              KiteCmdResult *res)
{
    return kite_mcast_cmd(s, cmd, false);
}
