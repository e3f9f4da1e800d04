/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Capture reading and RoCEv2 frame judging for the capture checker; see
 * roce_pcap.h (the message sequence checks are in roce_pcap_seq.c). The
 * ICRC and the well-formedness verdicts come from the
 * project's codec (kite_roce_icrc(), kite_roce_parse()); the headers are
 * also decoded here, independently, so that a frame the codec rejects can
 * still be described.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include "roce_pcap.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "kite_roce_pkt.h"

#define IP_PROTO_UDP        17
#define IPV4_FRAG_OFF_MASK  0x1fff

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
