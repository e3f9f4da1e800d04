/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kite RoCEv2 transport engine: the multicast group table. A fixed table
 * of groups, each with a fixed array of attached UD QPs, so that the work
 * one received datagram causes (kite_roce_recv.c copies it to every QP of
 * its group) is bounded by the device's advertised limits.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include "kite_roce_int.h"

KrMcastGroup *kr_mcast_find(KiteRoce *e, const uint8_t *gid)
{
    unsigned int i;

    for (i = 0; i < KITE_DEF_MAX_MCAST_GRP; i++) {
        if (e->mcast[i].nqp && !memcmp(e->mcast[i].gid, gid, 16)) {
            return &e->mcast[i];
        }
    }
    return NULL;
}

/* Index of @qp in group @g, or -1. */
static int kr_mcast_index(const KrMcastGroup *g, const KiteRoceQp *qp)
{
    uint32_t i;

    for (i = 0; i < g->nqp; i++) {
        if (g->qp[i] == qp) {
            return i;
        }
    }
    return -1;
}

uint8_t kite_roce_mcast_attach(KiteRoceQp *qp, const uint8_t *gid)
{
    KiteRoce *e = qp->e;
    KrMcastGroup *g;
    unsigned int i;

    if (qp->cfg.type != KITE_QPT_UD || !kite_gid_is_mcast(gid)) {
        return KITE_STS_BAD_PARAM;
    }
    g = kr_mcast_find(e, gid);
    if (g && kr_mcast_index(g, qp) >= 0) {
        return KITE_STS_EXISTS;
    }
    if (g && g->nqp == KITE_DEF_MAX_MCAST_QP) {
        return KITE_STS_NO_RESOURCES;
    }
    for (i = 0; !g && i < KITE_DEF_MAX_MCAST_GRP; i++) {
        if (!e->mcast[i].nqp) {
            g = &e->mcast[i];
            memcpy(g->gid, gid, sizeof(g->gid));
            kite_gid_mcast_mac(gid, g->mac);
            e->nmcast++;
        }
    }
    if (!g) {
        return KITE_STS_NO_RESOURCES;
    }
    g->qp[g->nqp++] = qp;
    qp->nmcast++;
    return KITE_STS_OK;
}

/* Takes @qp out of group @g (a member); the last QP frees the group. */
static void kr_mcast_remove(KiteRoce *e, KrMcastGroup *g, KiteRoceQp *qp)
{
    int i = kr_mcast_index(g, qp);

    g->qp[i] = g->qp[--g->nqp];
    g->qp[g->nqp] = NULL;
    qp->nmcast--;
    if (!g->nqp) {
        e->nmcast--;
    }
}

uint8_t kite_roce_mcast_detach(KiteRoceQp *qp, const uint8_t *gid)
{
    KrMcastGroup *g = kr_mcast_find(qp->e, gid);

    if (!g || kr_mcast_index(g, qp) < 0) {
        return KITE_STS_BAD_PARAM;
    }
    kr_mcast_remove(qp->e, g, qp);
    return KITE_STS_OK;
}

void kr_mcast_qp_destroyed(KiteRoceQp *qp)
{
    KiteRoce *e = qp->e;
    unsigned int i;

    for (i = 0; qp->nmcast && i < KITE_DEF_MAX_MCAST_GRP; i++) {
        if (e->mcast[i].nqp && kr_mcast_index(&e->mcast[i], qp) >= 0) {
            kr_mcast_remove(e, &e->mcast[i], qp);
        }
    }
}

bool kite_roce_mcast_mac(const KiteRoce *e, const uint8_t *mac)
{
    unsigned int i;

    for (i = 0; e->nmcast && i < KITE_DEF_MAX_MCAST_GRP; i++) {
        if (e->mcast[i].nqp && !memcmp(e->mcast[i].mac, mac, 6)) {
            return true;
        }
    }
    return false;
}

uint32_t kite_roce_mcast_groups(const KiteRoce *e)
{
    return e->nmcast;
}

uint32_t kite_roce_mcast_members(KiteRoce *e, const uint8_t *gid,
                                 void **hosts)
{
    KrMcastGroup *g = kr_mcast_find(e, gid);
    uint32_t i;

    for (i = 0; g && i < g->nqp; i++) {
        hosts[i] = g->qp[i]->cfg.host;
    }
    return g ? g->nqp : 0;
}
