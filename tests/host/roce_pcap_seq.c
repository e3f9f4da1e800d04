/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The capture checker's message sequence checks (see roce_pcap.h): the
 * packets of every RDMA READ and multi-packet RDMA WRITE in a capture
 * against the segmentation rules at the path MTU, followed PSN by PSN
 * across retransmissions.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include "roce_pcap.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "kite_roce_pkt.h"

/* Lines about broken messages printed per check (the rest are counted). */
#define SEQ_MAX_LINES       20

static bool is_read_resp(uint8_t op)
{
    return op >= KITE_OP_READ_RESP_FIRST && op <= KITE_OP_READ_RESP_ONLY;
}

/* RC request-direction opcodes (they share a requester's PSN space). */
static bool is_request(uint8_t op)
{
    return KITE_BTH_TRANSPORT(op) == KITE_BTH_RC &&
           (kite_roce_op_hdrs(op) & KITE_OPF_REQUEST);
}

/* @b is a packet from @a's destination to @a's source. */
static bool reverse_of(const struct rpcap_frame *a,
                       const struct rpcap_frame *b)
{
    return b->kind == RPCAP_ROCE && b->bth && b->ipver == a->ipver &&
           !memcmp(b->sip, a->dip, 16) && !memcmp(b->dip, a->sip, 16);
}

/* @b travels like @a: same addresses and destination QP. */
static bool same_stream(const struct rpcap_frame *a,
                        const struct rpcap_frame *b)
{
    return b->kind == RPCAP_ROCE && b->bth && b->ipver == a->ipver &&
           b->dqpn == a->dqpn && !memcmp(b->sip, a->sip, 16) &&
           !memcmp(b->dip, a->dip, 16);
}

struct seq_ctx {
    FILE *out;
    const char *tag;
    uint32_t lines;
};

static void seq_bad(struct seq_ctx *c, const struct rpcap_frame *first,
                    const char *what, const char *fmt, ...)
{
    va_list ap;

    if (c->lines++ >= SEQ_MAX_LINES) {
        return;
    }
    fprintf(c->out, "%s: frame %u: %s psn %u len %u: ", c->tag, first->no,
            what, first->psn, first->reth_len);
    va_start(ap, fmt);
    vfprintf(c->out, fmt, ap);
    va_end(ap);
    fputc('\n', c->out);
}

/*
 * Follow the @npk packets of a message whose first packet is @v[@j]: each
 * next one on @v[@j]'s stream with an opcode @want accepts. Packets with a
 * PSN before the expected one are retransmissions and are skipped. Fills
 * @idx; returns the number found, or -(k + 1) when packet k has a PSN
 * after the expected one (a gap).
 */
static long follow(const struct rpcap_frame *v, size_t n, size_t j,
                   uint32_t npk, bool (*want)(uint8_t), size_t *idx)
{
    uint32_t k = 0, psn = v[j].psn;
    size_t i;

    for (i = j; i < n && k < npk; i++) {
        if (!same_stream(&v[j], &v[i]) || !want(v[i].opcode)) {
            continue;
        }
        if (kite_psn_cmp(v[i].psn, kite_psn_add(psn, k)) < 0) {
            continue;                   /* an earlier PSN again */
        }
        if (v[i].psn != kite_psn_add(psn, k)) {
            idx[k] = i;
            return -(long)k - 1;
        }
        idx[k++] = i;
    }
    return (long)k;
}

/* Check packets @idx[0..@npk) of a message against the segmentation rules. */
static bool check_packets(const struct rpcap_frame *v, const size_t *idx,
                          uint32_t npk, uint8_t first_op, uint32_t len,
                          uint32_t pmtu, bool resp, struct seq_ctx *c,
                          const struct rpcap_frame *req, const char *what)
{
    uint64_t total = 0;
    uint32_t k;

    for (k = 0; k < npk; k++) {
        const struct rpcap_frame *p = &v[idx[k]];
        uint8_t want = kite_roce_seg_opcode(first_op, false, k, npk);
        uint8_t want_imm = kite_roce_seg_opcode(first_op, true, k, npk);
        uint32_t h = kite_roce_op_hdrs(p->opcode);

        if (p->opcode != want && (resp || p->opcode != want_imm)) {
            seq_bad(c, req, what,
                    "packet %u of %u (frame %u) is %s, the rules want %s",
                    k + 1, npk, p->no, rpcap_op_name(p->opcode),
                    rpcap_op_name(want));
            return false;
        }
        if (!rpcap_roce_valid(p) || p->paylen < 0) {
            seq_bad(c, req, what, "packet %u of %u (frame %u) is not valid",
                    k + 1, npk, p->no);
            return false;
        }
        if (k + 1 < npk && (uint32_t)p->paylen != pmtu) {
            seq_bad(c, req, what,
                    "packet %u of %u (frame %u, %s) carries %d bytes, not "
                    "the path MTU %u", k + 1, npk, p->no,
                    rpcap_op_name(p->opcode), p->paylen, pmtu);
            return false;
        }
        if (k + 1 == npk && (uint32_t)p->paylen > pmtu) {
            seq_bad(c, req, what,
                    "last packet (frame %u) carries %d bytes, more than the "
                    "path MTU %u", p->no, p->paylen, pmtu);
            return false;
        }
        /* Read responses: AETH on FIRST, LAST and ONLY, and an ACK. */
        if (resp && (h & (KITE_OPF_FIRST | KITE_OPF_LAST)) &&
            (!p->has_aeth ||
             KITE_AETH_TYPE(p->aeth_syn) != KITE_AETH_TYPE_ACK)) {
            seq_bad(c, req, what, "packet %u (frame %u) has no ACK AETH",
                    k + 1, p->no);
            return false;
        }
        total += (uint32_t)p->paylen;
    }
    if (total != len) {
        seq_bad(c, req, what, "%" PRIu64 " bytes in %u packets, RETH says %u",
                total, npk, len);
        return false;
    }
    return true;
}

static bool check_read(const struct rpcap_frame *v, size_t n, size_t i,
                       uint32_t pmtu, struct seq_ctx *c, size_t *idx)
{
    const struct rpcap_frame *req = &v[i];
    uint32_t npk = kite_roce_npkts(req->reth_len, pmtu);
    size_t j;
    long got;

    if (!rpcap_roce_valid(req)) {
        seq_bad(c, req, "READ", "the request is not a valid frame");
        return false;
    }
    /* The first response: from the responder, at the request's PSN. */
    for (j = i + 1; j < n; j++) {
        if (reverse_of(req, &v[j]) && is_read_resp(v[j].opcode) &&
            v[j].psn == req->psn) {
            break;
        }
    }
    if (j == n) {
        seq_bad(c, req, "READ", "no read response with PSN %u", req->psn);
        return false;
    }
    got = follow(v, n, j, npk, is_read_resp, idx);
    if (got < 0) {
        seq_bad(c, req, "READ", "response %ld (frame %u) has PSN %u, not %u",
                -got, v[idx[-got - 1]].no, v[idx[-got - 1]].psn,
                kite_psn_add(req->psn, (uint32_t)(-got - 1)));
        return false;
    }
    if ((uint32_t)got < npk) {
        seq_bad(c, req, "READ", "%ld of %u responses in the capture", got,
                npk);
        return false;
    }
    return check_packets(v, idx, npk, KITE_OP_READ_RESP_FIRST,
                         req->reth_len, pmtu, true, c, req, "READ");
}

static bool check_write(const struct rpcap_frame *v, size_t n, size_t i,
                        uint32_t pmtu, struct seq_ctx *c, size_t *idx)
{
    const struct rpcap_frame *req = &v[i];
    uint32_t npk = kite_roce_npkts(req->reth_len, pmtu);
    uint32_t last, maxsent;
    size_t j;
    long got;

    if (!rpcap_roce_valid(req)) {
        seq_bad(c, req, "WRITE", "the first packet is not a valid frame");
        return false;
    }
    got = follow(v, n, i, npk, is_request, idx);
    if (got < 0) {
        seq_bad(c, req, "WRITE", "packet %ld (frame %u) has PSN %u, not %u",
                -got, v[idx[-got - 1]].no, v[idx[-got - 1]].psn,
                kite_psn_add(req->psn, (uint32_t)(-got - 1)));
        return false;
    }
    if ((uint32_t)got < npk) {
        seq_bad(c, req, "WRITE", "%ld of %u packets in the capture", got,
                npk);
        return false;
    }
    if (!check_packets(v, idx, npk, KITE_OP_WRITE_FIRST, req->reth_len,
                       pmtu, false, c, req, "WRITE")) {
        return false;
    }
    /*
     * An ACK covering the last PSN: from the responder, with a PSN at or
     * after it but not after anything the requester had sent by then (the
     * bound keeps other QPs' ACKs from matching).
     */
    last = kite_psn_add(req->psn, npk - 1);
    maxsent = last;
    for (j = idx[npk - 1] + 1; j < n; j++) {
        const struct rpcap_frame *a = &v[j];

        if (same_stream(req, a) && is_request(a->opcode) &&
            kite_psn_cmp(a->psn, maxsent) > 0) {
            maxsent = a->psn;
            continue;
        }
        if (!reverse_of(req, a) || !a->has_aeth ||
            KITE_AETH_TYPE(a->aeth_syn) != KITE_AETH_TYPE_ACK ||
            a->opcode == KITE_OP_READ_RESP_MIDDLE) {
            continue;
        }
        if (kite_psn_cmp(a->psn, last) >= 0 &&
            kite_psn_cmp(a->psn, maxsent) <= 0 && rpcap_roce_valid(a)) {
            return true;
        }
    }
    seq_bad(c, req, "WRITE", "no ACK covering the last PSN %u", last);
    return false;
}

void rpcap_check_seq(const struct rpcap_frame *v, size_t n, bool write,
                     uint32_t pmtu, const uint8_t *mac, FILE *out,
                     const char *tag, struct rpcap_seq *s)
{
    struct seq_ctx c = { .out = out, .tag = tag };
    size_t i, *idx;
    int side;

    memset(s, 0, sizeof(*s));
    if (!pmtu) {
        return;
    }
    for (i = 0; i < n; i++) {
        const struct rpcap_frame *f = &v[i];
        uint32_t npk;
        bool good;

        if (f->kind != RPCAP_ROCE || !f->bth || !f->has_reth) {
            continue;
        }
        if (write ? (f->opcode != KITE_OP_WRITE_FIRST &&
                     f->opcode != KITE_OP_WRITE_ONLY &&
                     f->opcode != KITE_OP_WRITE_ONLY_IMM)
                  : f->opcode != KITE_OP_READ_REQ) {
            continue;
        }
        /* A request sent again (same stream and PSN) was checked already. */
        {
            size_t k;
            bool again = false;

            for (k = i; k-- > 0 && i - k < 4096;) {
                if (same_stream(f, &v[k]) && v[k].opcode == f->opcode &&
                    v[k].psn == f->psn) {
                    again = true;
                    break;
                }
            }
            if (again) {
                continue;
            }
        }
        side = mac && !memcmp(f->smac, mac, 6) ? 0 : 1;
        npk = kite_roce_npkts(f->reth_len, pmtu);
        if (write && f->opcode != KITE_OP_WRITE_FIRST) {
            /* ONLY: the whole message in one packet of at most a PMTU. */
            good = rpcap_roce_valid(f) && f->paylen >= 0 &&
                   (uint32_t)f->paylen == f->reth_len && npk == 1;
            if (!good) {
                seq_bad(&c, f, "WRITE", "%s with %d bytes (path MTU %u)",
                        rpcap_op_name(f->opcode), f->paylen, pmtu);
            }
        } else {
            idx = calloc(npk, sizeof(*idx));
            if (!idx) {
                seq_bad(&c, f, write ? "WRITE" : "READ", "out of memory");
                s->bad++;
                continue;
            }
            good = write ? check_write(v, n, i, pmtu, &c, idx)
                         : check_read(v, n, i, pmtu, &c, idx);
            free(idx);
            if (write && good && npk < 2) {
                seq_bad(&c, f, "WRITE", "WRITE_FIRST for one packet's data");
                good = false;
            }
        }
        s->msgs[side]++;
        if (npk > 1) {
            s->multi[side]++;
        }
        if (!good) {
            s->bad++;
        }
    }
    if (c.lines > SEQ_MAX_LINES) {
        fprintf(out, "%s: %u more broken messages not shown\n", tag,
                c.lines - SEQ_MAX_LINES);
    }
}
