/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Capture reading and RoCEv2 frame judging for the capture checker; see
 * roce_pcap.h. The ICRC and the well-formedness verdicts come from the
 * project's codec (kite_roce_icrc(), kite_roce_parse()); the headers are
 * also decoded here, independently, so that a frame the codec rejects can
 * still be described.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include "roce_pcap.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "kite_roce_pkt.h"

#define IP_PROTO_UDP        17
#define IPV4_FRAG_OFF_MASK  0x1fff
/* Lines about broken messages printed per check (the rest are counted). */
#define SEQ_MAX_LINES       20

/* ---- byte order ---- */

static uint16_t be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t be24(const uint8_t *p)
{
    return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
           (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const uint8_t *p)
{
    return (uint64_t)be32(p) << 32 | be32(p + 4);
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 |
           (uint32_t)p[1] << 8 | p[0];
}

static void st_le32(uint8_t *p, uint32_t v)
{
    p[0] = v;
    p[1] = v >> 8;
    p[2] = v >> 16;
    p[3] = v >> 24;
}

static void st_le16(uint8_t *p, uint16_t v)
{
    p[0] = v;
    p[1] = v >> 8;
}

static uint32_t swap32(uint32_t v)
{
    return (v >> 24) | ((v >> 8) & 0xff00) | ((v << 8) & 0xff0000) |
           (v << 24);
}

/* ---- pcap files ---- */

static void set_err(struct rpcap_reader *r, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(r->err, sizeof(r->err), fmt, ap);
    va_end(ap);
}

static uint32_t rd32(const struct rpcap_reader *r, const uint8_t *p)
{
    uint32_t v = le32(p);

    return r->swap ? swap32(v) : v;
}

int rpcap_open(struct rpcap_reader *r, const char *path)
{
    uint8_t h[RPCAP_FILE_HDR_LEN];
    uint32_t magic;

    memset(r, 0, sizeof(*r));
    r->f = fopen(path, "rb");
    if (!r->f) {
        set_err(r, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (fread(h, 1, sizeof(h), r->f) != sizeof(h)) {
        set_err(r, "%s: shorter than a pcap file header", path);
        goto bad;
    }
    magic = le32(h);
    if (magic == RPCAP_MAGIC_USEC || magic == RPCAP_MAGIC_NSEC) {
        r->swap = false;
    } else if (swap32(magic) == RPCAP_MAGIC_USEC ||
               swap32(magic) == RPCAP_MAGIC_NSEC) {
        r->swap = true;
        magic = swap32(magic);
    } else {
        set_err(r, "%s: not a classic pcap file (magic 0x%08x)", path, magic);
        goto bad;
    }
    r->nsec = magic == RPCAP_MAGIC_NSEC;
    r->snaplen = rd32(r, h + 16);
    r->linktype = rd32(r, h + 20);
    if (r->linktype != RPCAP_LINKTYPE_ETHERNET) {
        set_err(r, "%s: link type %u, not Ethernet", path, r->linktype);
        goto bad;
    }
    return 0;
bad:
    fclose(r->f);
    r->f = NULL;
    return -1;
}

int rpcap_next(struct rpcap_reader *r, uint8_t *buf, size_t cap,
               size_t *caplen, size_t *origlen)
{
    uint8_t h[RPCAP_REC_HDR_LEN];
    size_t got;
    uint32_t incl, orig;

    got = fread(h, 1, sizeof(h), r->f);
    if (got == 0 && feof(r->f)) {
        return 0;
    }
    if (got != sizeof(h)) {
        set_err(r, "record %u: truncated record header", r->count + 1);
        return -1;
    }
    incl = rd32(r, h + 8);
    orig = rd32(r, h + 12);
    if (incl > RPCAP_MAX_REC || incl > cap) {
        set_err(r, "record %u: %u bytes, more than %zu", r->count + 1, incl,
                cap < RPCAP_MAX_REC ? cap : (size_t)RPCAP_MAX_REC);
        return -1;
    }
    if (fread(buf, 1, incl, r->f) != incl) {
        set_err(r, "record %u: truncated (%u bytes announced)",
                r->count + 1, incl);
        return -1;
    }
    r->count++;
    *caplen = incl;
    *origlen = orig < incl ? incl : orig;
    return 1;
}

void rpcap_close(struct rpcap_reader *r)
{
    if (r->f) {
        fclose(r->f);
    }
    r->f = NULL;
}

int rpcap_write_header(FILE *f, uint32_t snaplen)
{
    uint8_t h[RPCAP_FILE_HDR_LEN] = { 0 };

    st_le32(h, RPCAP_MAGIC_USEC);
    st_le16(h + 4, 2);              /* version 2.4 */
    st_le16(h + 6, 4);
    st_le32(h + 16, snaplen);
    st_le32(h + 20, RPCAP_LINKTYPE_ETHERNET);
    return fwrite(h, 1, sizeof(h), f) == sizeof(h) ? 0 : -1;
}

int rpcap_write_frame(FILE *f, const uint8_t *frame, size_t len,
                      uint32_t ts_sec, uint32_t ts_usec)
{
    uint8_t h[RPCAP_REC_HDR_LEN];

    st_le32(h, ts_sec);
    st_le32(h + 4, ts_usec);
    st_le32(h + 8, (uint32_t)len);
    st_le32(h + 12, (uint32_t)len);
    if (fwrite(h, 1, sizeof(h), f) != sizeof(h) ||
        fwrite(frame, 1, len, f) != len) {
        return -1;
    }
    return 0;
}

/* ---- one frame ---- */

static void map_v4(uint8_t gid[16], const uint8_t *a)
{
    memset(gid, 0, 16);
    gid[10] = gid[11] = 0xff;
    memcpy(gid + 12, a, 4);
}

/* BTH and extended headers at @bth, @avail bytes, UDP length @udplen. */
static void decode_bth(const uint8_t *bth, size_t avail, uint32_t udplen,
                       struct rpcap_frame *fr)
{
    uint32_t h, ext, body, off;
    const uint8_t *x;

    if (udplen < KITE_UDP_HDR_LEN + KITE_BTH_LEN || avail < KITE_BTH_LEN) {
        return;
    }
    fr->bth = true;
    fr->opcode = bth[0];
    fr->pad = (bth[1] >> 4) & 3;
    fr->dqpn = be24(bth + 5);
    fr->ackreq = bth[8] & 0x80;
    fr->psn = be24(bth + 9);
    fr->paylen = -1;

    h = kite_roce_op_hdrs(fr->opcode);
    if (!(h & KITE_OPF_VALID)) {
        return;
    }
    ext = kite_roce_op_ext_len(fr->opcode);
    if (udplen < KITE_UDP_HDR_LEN + KITE_BTH_LEN + ext + KITE_ICRC_LEN ||
        avail < KITE_BTH_LEN + ext) {
        return;
    }
    body = udplen - (KITE_UDP_HDR_LEN + KITE_BTH_LEN + ext + KITE_ICRC_LEN);
    if (fr->pad <= body) {
        fr->paylen = (int32_t)(body - fr->pad);
    }
    /* Extended headers in wire order: DETH, RETH, AtomicETH, AETH, ... */
    x = bth + KITE_BTH_LEN;
    off = (h & KITE_HDR_DETH) ? KITE_DETH_LEN : 0;
    if (h & KITE_HDR_RETH) {
        fr->has_reth = true;
        fr->reth_va = be64(x + off);
        fr->reth_len = be32(x + off + 12);
        off += KITE_RETH_LEN;
    }
    if (h & KITE_HDR_ATOMIC_ETH) {
        off += KITE_ATOMIC_ETH_LEN;
    }
    if (h & KITE_HDR_AETH) {
        fr->has_aeth = true;
        fr->aeth_syn = x[off];
        fr->aeth_msn = be24(x + off + 1);
    }
}

void rpcap_inspect(const uint8_t *frame, size_t caplen, size_t origlen,
                   uint32_t no, struct rpcap_frame *fr)
{
    struct kite_roce_pkt pkt;
    const uint8_t *ip, *udp;
    size_t len;
    uint32_t iplen, udplen, end;

    memset(fr, 0, sizeof(*fr));
    fr->no = no;
    fr->paylen = -1;
    fr->parse = KITE_ROCE_NOT_ROCE;
    fr->truncated = caplen < origlen;
    if (caplen < KITE_ETH_HLEN) {
        return;
    }
    memcpy(fr->dmac, frame, 6);
    memcpy(fr->smac, frame + 6, 6);
    fr->ethertype = be16(frame + 12);
    ip = frame + KITE_ETH_HLEN;
    len = caplen - KITE_ETH_HLEN;

    if (fr->ethertype == KITE_ETH_P_IPV4) {
        if (len < KITE_IPV4_HDR_LEN || (ip[0] >> 4) != 4) {
            return;
        }
        fr->ipver = 4;
        map_v4(fr->sip, ip + 12);
        map_v4(fr->dip, ip + 16);
        iplen = (ip[0] & 0x0f) * 4u;
        /* Only the first fragment holds the UDP header. */
        if (ip[9] != IP_PROTO_UDP || (be16(ip + 6) & IPV4_FRAG_OFF_MASK) ||
            iplen < KITE_IPV4_HDR_LEN || len < iplen + KITE_UDP_HDR_LEN) {
            return;
        }
    } else if (fr->ethertype == KITE_ETH_P_IPV6) {
        if (len < KITE_IPV6_HDR_LEN || (ip[0] >> 4) != 6) {
            return;
        }
        fr->ipver = 6;
        memcpy(fr->sip, ip + 8, 16);
        memcpy(fr->dip, ip + 24, 16);
        iplen = KITE_IPV6_HDR_LEN;
        if (ip[6] != IP_PROTO_UDP || len < iplen + KITE_UDP_HDR_LEN) {
            return;
        }
    } else {
        return;
    }
    udp = ip + iplen;
    if (be16(udp + 2) != KITE_ROCE_UDP_DPORT) {
        return;
    }
    fr->kind = RPCAP_ROCE;
    fr->sport = be16(udp);
    fr->parse = kite_roce_parse(frame, caplen, &pkt);
    /*
     * A UDP/4791 frame the codec calls NOT_ROCE (IP options, a fragment,
     * extension headers) is no valid RoCEv2 frame either.
     */
    if (fr->parse == KITE_ROCE_NOT_ROCE) {
        fr->parse = KITE_ROCE_MALFORMED;
    }
    udplen = be16(udp + 4);
    decode_bth(udp + KITE_UDP_HDR_LEN, len - iplen - KITE_UDP_HDR_LEN,
               udplen, fr);
    /* The ICRC ends the UDP datagram; kite_roce_icrc() wants plain headers. */
    end = iplen + udplen;
    if (iplen == (fr->ipver == 4 ? KITE_IPV4_HDR_LEN : KITE_IPV6_HDR_LEN) &&
        udplen >= KITE_UDP_HDR_LEN + KITE_BTH_LEN + KITE_ICRC_LEN &&
        end <= len) {
        fr->icrc_known = true;
        fr->icrc_calc = kite_roce_icrc(ip, end - KITE_ICRC_LEN);
        fr->icrc_wire = le32(ip + end - KITE_ICRC_LEN);
        fr->icrc_ok = fr->icrc_calc == fr->icrc_wire;
    }
}

bool rpcap_roce_valid(const struct rpcap_frame *fr)
{
    return fr->kind == RPCAP_ROCE && fr->parse == KITE_ROCE_OK &&
           fr->icrc_known && fr->icrc_ok && !fr->truncated;
}

static const char *const op_names[] = {
    [KITE_OP_SEND_FIRST] = "SEND_FIRST",
    [KITE_OP_SEND_MIDDLE] = "SEND_MIDDLE",
    [KITE_OP_SEND_LAST] = "SEND_LAST",
    [KITE_OP_SEND_LAST_IMM] = "SEND_LAST_IMM",
    [KITE_OP_SEND_ONLY] = "SEND_ONLY",
    [KITE_OP_SEND_ONLY_IMM] = "SEND_ONLY_IMM",
    [KITE_OP_WRITE_FIRST] = "WRITE_FIRST",
    [KITE_OP_WRITE_MIDDLE] = "WRITE_MIDDLE",
    [KITE_OP_WRITE_LAST] = "WRITE_LAST",
    [KITE_OP_WRITE_LAST_IMM] = "WRITE_LAST_IMM",
    [KITE_OP_WRITE_ONLY] = "WRITE_ONLY",
    [KITE_OP_WRITE_ONLY_IMM] = "WRITE_ONLY_IMM",
    [KITE_OP_READ_REQ] = "READ_REQUEST",
    [KITE_OP_READ_RESP_FIRST] = "READ_RESPONSE_FIRST",
    [KITE_OP_READ_RESP_MIDDLE] = "READ_RESPONSE_MIDDLE",
    [KITE_OP_READ_RESP_LAST] = "READ_RESPONSE_LAST",
    [KITE_OP_READ_RESP_ONLY] = "READ_RESPONSE_ONLY",
    [KITE_OP_ACK] = "ACK",
    [KITE_OP_ATOMIC_ACK] = "ATOMIC_ACK",
    [KITE_OP_CMP_SWP] = "COMPARE_SWAP",
    [KITE_OP_FETCH_ADD] = "FETCH_ADD",
    [KITE_OP_SEND_LAST_INV] = "SEND_LAST_INV",
    [KITE_OP_SEND_ONLY_INV] = "SEND_ONLY_INV",
};

const char *rpcap_op_name(uint8_t op)
{
    static const char *const tr[8] = {
        "RC", "UC", "RD", "UD", "CNP", "XRC", "?", "?",
    };
    /* A few buffers, so that one printf may name several opcodes. */
    static char buf[4][32];
    static unsigned int next;
    uint8_t k = op & 0x1f;
    char *b;

    if (!(kite_roce_op_hdrs(op) & KITE_OPF_VALID) ||
        k >= sizeof(op_names) / sizeof(op_names[0]) || !op_names[k]) {
        return "?";
    }
    b = buf[next++ % 4];
    snprintf(b, sizeof(buf[0]), "%s_%s", tr[op >> 5], op_names[k]);
    return b;
}

static const char *parse_name(int r)
{
    switch (r) {
    case KITE_ROCE_OK:
        return "ok";
    case KITE_ROCE_NOT_ROCE:
        return "not-roce";
    case KITE_ROCE_MALFORMED:
        return "MALFORMED";
    case KITE_ROCE_BAD_ICRC:
        return "BAD_ICRC";
    }
    return "?";
}

static int fmt_mac(char *b, size_t cap, const uint8_t *m)
{
    return snprintf(b, cap, "%02x:%02x:%02x:%02x:%02x:%02x",
                    m[0], m[1], m[2], m[3], m[4], m[5]);
}

void rpcap_format(const struct rpcap_frame *fr, char *buf, size_t cap)
{
    char mac[18];
    size_t n;

    fmt_mac(mac, sizeof(mac), fr->smac);
    if (fr->kind != RPCAP_ROCE) {
        if (fr->ipver) {
            snprintf(buf, cap, "frame %u src %s ipv%d not-roce%s", fr->no,
                     mac, fr->ipver, fr->truncated ? " truncated" : "");
        } else {
            snprintf(buf, cap, "frame %u src %s ethertype 0x%04x%s", fr->no,
                     mac, fr->ethertype, fr->truncated ? " truncated" : "");
        }
        return;
    }
    n = (size_t)snprintf(buf, cap, "frame %u src %s ipv%d", fr->no, mac,
                         fr->ipver);
    if (n < cap && fr->bth) {
        n += (size_t)snprintf(buf + n, cap - n,
                              " op 0x%02x %s qp 0x%06x psn %u ackreq %d",
                              fr->opcode, rpcap_op_name(fr->opcode),
                              fr->dqpn, fr->psn, fr->ackreq);
        if (n < cap) {
            if (fr->paylen >= 0) {
                n += (size_t)snprintf(buf + n, cap - n, " paylen %d",
                                      fr->paylen);
            } else {
                n += (size_t)snprintf(buf + n, cap - n, " paylen ?");
            }
        }
        if (n < cap && fr->has_reth) {
            n += (size_t)snprintf(buf + n, cap - n, " reth %u",
                                  fr->reth_len);
        }
        if (n < cap && fr->has_aeth) {
            n += (size_t)snprintf(buf + n, cap - n, " aeth 0x%02x",
                                  fr->aeth_syn);
        }
    } else if (n < cap) {
        n += (size_t)snprintf(buf + n, cap - n, " no-bth");
    }
    if (n < cap) {
        if (!fr->icrc_known) {
            n += (size_t)snprintf(buf + n, cap - n, " icrc ?");
        } else if (fr->icrc_ok) {
            n += (size_t)snprintf(buf + n, cap - n, " icrc ok");
        } else {
            n += (size_t)snprintf(buf + n, cap - n,
                                  " icrc BAD (0x%08x, expected 0x%08x)",
                                  fr->icrc_wire, fr->icrc_calc);
        }
    }
    if (n < cap && fr->parse != KITE_ROCE_OK) {
        n += (size_t)snprintf(buf + n, cap - n, " codec %s",
                              parse_name(fr->parse));
    }
    if (n < cap && fr->truncated) {
        snprintf(buf + n, cap - n, " truncated");
    }
}

int rpcap_parse_mac(const char *s, uint8_t mac[6])
{
    unsigned int v[6];
    char extra;
    int i;

    if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &v[0], &v[1], &v[2], &v[3], &v[4],
               &v[5], &extra) != 6) {
        return -1;
    }
    for (i = 0; i < 6; i++) {
        if (v[i] > 0xff) {
            return -1;
        }
        mac[i] = (uint8_t)v[i];
    }
    return 0;
}

/* ---- message sequences ---- */

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

/* ---- the report ---- */

static void result(FILE *out, const char *name, bool ok, const char *fmt, ...)
{
    va_list ap;

    fprintf(out, "result %s %s ", name, ok ? "ok" : "FAIL");
    va_start(ap, fmt);
    vfprintf(out, fmt, ap);
    va_end(ap);
    fputc('\n', out);
}

static bool seq_report(const struct rpcap_frame *v, size_t n, bool write,
                       const struct rpcap_opts *o, FILE *out)
{
    const char *name = write ? "write-seq" : "read-seq";
    struct rpcap_seq s;
    bool ok;

    rpcap_check_seq(v, n, write, o->pmtu, o->have_mac ? o->mac : NULL, out,
                    name, &s);
    ok = o->pmtu && !s.bad && s.multi[1] >= o->min_msgs &&
         (!o->have_mac || s.multi[0] >= o->min_msgs);
    result(out, name, ok,
           "path MTU %u: Kite requester %u %s (%u multi-packet), peer "
           "requester %u (%u multi-packet), %u broken%s", o->pmtu,
           s.msgs[0], write ? "WRITEs" : "READs", s.multi[0], s.msgs[1],
           s.multi[1], s.bad,
           ok ? "" : (s.bad ? "" : "; too few multi-packet messages"));
    return ok;
}

int rpcap_report(const char *path, const struct rpcap_opts *o, FILE *out,
                 struct rpcap_totals *tp)
{
    struct rpcap_reader r;
    struct rpcap_totals t;
    struct rpcap_frame *v = NULL, *nv;
    size_t n = 0, cap = 0, caplen, origlen;
    uint8_t *buf;
    char line[256];
    int rc, ret = 0;
    bool ok;

    memset(&t, 0, sizeof(t));
    if (tp) {
        memset(tp, 0, sizeof(*tp));
    }
    if (rpcap_open(&r, path) < 0) {
        fprintf(out, "error: %s\n", r.err);
        return 2;
    }
    buf = malloc(RPCAP_MAX_REC);
    if (!buf) {
        rpcap_close(&r);
        fprintf(out, "error: out of memory\n");
        return 2;
    }
    while ((rc = rpcap_next(&r, buf, RPCAP_MAX_REC, &caplen, &origlen)) > 0) {
        struct rpcap_frame *f;

        if (n == cap) {
            cap = cap ? cap * 2 : 1024;
            nv = realloc(v, cap * sizeof(*v));
            if (!nv) {
                rc = -1;
                snprintf(r.err, sizeof(r.err), "out of memory");
                break;
            }
            v = nv;
        }
        f = &v[n++];
        rpcap_inspect(buf, caplen, origlen, (uint32_t)n, f);
        if (!o->quiet) {
            rpcap_format(f, line, sizeof(line));
            fprintf(out, "%s\n", line);
        }
        t.frames++;
        t.truncated += f->truncated;
        if (f->kind != RPCAP_ROCE) {
            t.other++;
            continue;
        }
        t.roce++;
        if (rpcap_roce_valid(f)) {
            t.roce_valid++;
        }
        if (!f->icrc_known) {
            t.icrc_unknown++;
        } else if (f->icrc_ok) {
            t.icrc_ok++;
        } else {
            t.icrc_bad++;
        }
        t.malformed += f->parse == KITE_ROCE_MALFORMED;
        if (o->have_mac && !memcmp(f->smac, o->mac, 6)) {
            t.ours++;
            t.ours_valid += rpcap_roce_valid(f);
        } else {
            t.peer++;
            t.peer_valid += rpcap_roce_valid(f);
        }
    }
    free(buf);
    rpcap_close(&r);
    if (rc < 0) {
        fprintf(out, "error: %s: %s\n", path, r.err);
        free(v);
        return 2;
    }

    fprintf(out, "totals: %u frames, %u other, %u UDP/4791: %u valid RoCEv2; "
            "ICRC %u ok, %u bad, %u not computable; %u malformed; "
            "%u truncated\n", t.frames, t.other, t.roce, t.roce_valid,
            t.icrc_ok, t.icrc_bad, t.icrc_unknown, t.malformed, t.truncated);
    if (o->have_mac) {
        fprintf(out, "kite: %u UDP/4791 frames, %u valid RoCEv2 with good "
                "ICRC; peer: %u, %u valid\n", t.ours, t.ours_valid, t.peer,
                t.peer_valid);
    }

    ok = t.roce_valid == t.roce && !t.truncated && t.roce > 0;
    result(out, "icrc", ok,
           "%u RoCEv2 frames: %u valid (ICRC ok %u, bad %u, not computable "
           "%u, malformed %u, truncated %u); Kite %u/%u, peer %u/%u",
           t.roce, t.roce_valid, t.icrc_ok, t.icrc_bad, t.icrc_unknown,
           t.malformed, t.truncated, t.ours_valid, t.ours, t.peer_valid,
           t.peer);
    if (!ok) {
        ret = 1;
    }
    if (o->have_mac) {
        ok = t.ours > 0 && t.ours_valid == t.ours;
        result(out, "kite-frames", ok,
               "%u UDP/4791 frames from the Kite MAC, %u RoCEv2 with a valid "
               "ICRC", t.ours, t.ours_valid);
        if (!ok) {
            ret = 1;
        }
    }
    if (o->check_read && !seq_report(v, n, false, o, out)) {
        ret = 1;
    }
    if (o->check_write && !seq_report(v, n, true, o, out)) {
        ret = 1;
    }
    if (tp) {
        *tp = t;
    }
    free(v);
    return ret;
}
