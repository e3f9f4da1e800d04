/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The capture checker's code (tests/host/roce_pcap.[ch], the core of
 * tests/capture/kite-pcap): pcap files written here with frames built by
 * the codec are read back byte for byte (both byte orders, nanosecond
 * files, damaged files refused), each frame gets the right verdict (a
 * corrupted ICRC, a non-RoCE frame, a UDP frame to another port), and the
 * READ / WRITE sequence checks accept what the rules allow and reject each
 * kind of departure from them.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "kite_roce_pkt.h"
#include "roce_pcap.h"

#define MAX_FRAMES  32
#define PMTU        256
#define KITE_QPN    0x11
#define PEER_QPN    0x12

static const uint8_t kite_mac[6] = { 0x52, 0x54, 0x00, 0x4b, 0x00, 0x01 };
static const uint8_t peer_mac[6] = { 0x52, 0x54, 0x00, 0x4b, 0x00, 0x02 };
static const uint8_t kite_ip4[4] = { 198, 18, 0, 1 };
static const uint8_t peer_ip4[4] = { 198, 18, 0, 2 };

struct frames {
    uint8_t buf[MAX_FRAMES][KITE_ROCE_MAX_FRAME];
    size_t len[MAX_FRAMES];
    size_t n;
};

static uint8_t payload[4096];

static void gid4(uint8_t *gid, const uint8_t *a)
{
    memset(gid, 0, 16);
    gid[10] = gid[11] = 0xff;
    memcpy(gid + 12, a, 4);
}

static void gid6(uint8_t *gid, uint8_t last)
{
    static const uint8_t pfx[4] = { 0x20, 0x01, 0x0d, 0xb8 };

    memset(gid, 0, 16);
    memcpy(gid, pfx, sizeof(pfx));
    gid[15] = last;
}

/* A RoCEv2 frame from Kite (@from_kite) or from the peer, built by the codec. */
static void add_roce(struct frames *f, bool from_kite, bool v6, uint8_t op,
                     uint32_t psn, uint32_t paylen, uint32_t reth_len)
{
    struct kite_roce_pkt p;
    size_t len;

    assert_true(f->n < MAX_FRAMES);
    memset(&p, 0, sizeof(p));
    memcpy(p.smac, from_kite ? kite_mac : peer_mac, 6);
    memcpy(p.dmac, from_kite ? peer_mac : kite_mac, 6);
    p.ipv6 = v6;
    if (v6) {
        gid6(p.sgid, from_kite ? 1 : 2);
        gid6(p.dgid, from_kite ? 2 : 1);
    } else {
        gid4(p.sgid, from_kite ? kite_ip4 : peer_ip4);
        gid4(p.dgid, from_kite ? peer_ip4 : kite_ip4);
    }
    p.hop_limit = 64;
    p.sport = 0xc123;
    p.opcode = op;
    p.pkey = KITE_BTH_PKEY_DEFAULT;
    p.dqpn = from_kite ? PEER_QPN : KITE_QPN;
    p.psn = psn;
    p.ackreq = op == KITE_OP_READ_REQ || op == KITE_OP_WRITE_LAST;
    p.reth_va = 0x1000;
    p.reth_rkey = 0x42;
    p.reth_len = reth_len;
    p.aeth_syndrome = KITE_AETH_ACK_UNLIMITED;
    p.aeth_msn = 7;
    p.ieth_rkey = 0x5e0142;
    p.payload = payload;
    p.paylen = paylen;
    len = kite_roce_build(f->buf[f->n], sizeof(f->buf[0]), &p);
    assert_true(len > 0);
    f->len[f->n++] = len;
}

/* An ARP request from the peer (not IP). */
static void add_arp(struct frames *f)
{
    uint8_t *b = f->buf[f->n];

    memset(b, 0, 42);
    memset(b, 0xff, 6);
    memcpy(b + 6, peer_mac, 6);
    b[12] = 0x08;
    b[13] = 0x06;
    f->len[f->n++] = 42;
}

/* A UDP datagram to port 53 from Kite (IP, but not RoCE). */
static void add_udp53(struct frames *f)
{
    uint8_t *b = f->buf[f->n];

    memset(b, 0, 60);
    memcpy(b, peer_mac, 6);
    memcpy(b + 6, kite_mac, 6);
    b[12] = 0x08;
    b[14] = 0x45;
    b[17] = 46;                 /* total length */
    b[22] = 64;
    b[23] = 17;                 /* UDP */
    memcpy(b + 26, kite_ip4, 4);
    memcpy(b + 30, peer_ip4, 4);
    b[36] = 0;
    b[37] = 53;                 /* destination port */
    b[39] = 26;                 /* UDP length */
    f->len[f->n++] = 60;
}

/* Kite reads 600 bytes: request, FIRST, MIDDLE, LAST. */
static void add_read(struct frames *f, uint32_t psn)
{
    add_roce(f, true, false, KITE_OP_READ_REQ, psn, 0, 600);
    add_roce(f, false, false, KITE_OP_READ_RESP_FIRST, psn, PMTU, 0);
    add_roce(f, false, false, KITE_OP_READ_RESP_MIDDLE, psn + 1, PMTU, 0);
    add_roce(f, false, false, KITE_OP_READ_RESP_LAST, psn + 2, 88, 0);
}

/* The peer writes 520 bytes: FIRST, MIDDLE, LAST, Kite's ACK. */
static void add_write(struct frames *f, uint32_t psn)
{
    add_roce(f, false, false, KITE_OP_WRITE_FIRST, psn, PMTU, 520);
    add_roce(f, false, false, KITE_OP_WRITE_MIDDLE, psn + 1, PMTU, 0);
    add_roce(f, false, false, KITE_OP_WRITE_LAST, psn + 2, 8, 0);
    add_roce(f, true, false, KITE_OP_ACK, psn + 2, 0, 0);
}

/* The whole test capture: see the file comment of each frame's index. */
static void build_capture(struct frames *f, bool corrupt)
{
    memset(f, 0, sizeof(*f));
    add_arp(f);                                         /* 1 */
    add_read(f, 100);                                   /* 2-5 */
    add_write(f, 5000);                                 /* 6-9 */
    add_udp53(f);                                       /* 10 */
    /* 11: Kite, IPv6, SEND_ONLY; its ICRC corrupted on request. */
    add_roce(f, true, true, KITE_OP_SEND_ONLY, 200, 40, 0);
    if (corrupt) {
        f->buf[f->n - 1][f->len[f->n - 1] - 2] ^= 0x5a;
    }
}

static char *write_pcap(const struct frames *f)
{
    char *path = strdup("/tmp/kite-test-pcap.XXXXXX");
    FILE *fp;
    size_t i;
    int fd;

    assert_non_null(path);
    fd = mkstemp(path);
    assert_true(fd >= 0);
    fp = fdopen(fd, "wb");
    assert_non_null(fp);
    assert_int_equal(rpcap_write_header(fp, RPCAP_MAX_REC), 0);
    for (i = 0; i < f->n; i++) {
        assert_int_equal(rpcap_write_frame(fp, f->buf[i], f->len[i],
                                           1000 + (uint32_t)i, 0), 0);
    }
    assert_int_equal(fclose(fp), 0);
    return path;
}

static void inspect_all(const struct frames *f, struct rpcap_frame *v)
{
    size_t i;

    for (i = 0; i < f->n; i++) {
        rpcap_inspect(f->buf[i], f->len[i], f->len[i], (uint32_t)i + 1,
                      &v[i]);
    }
}

/* ---- reading files ---- */

static void test_read_back(void **state)
{
    static struct frames f;
    static uint8_t buf[RPCAP_MAX_REC];
    struct rpcap_reader r;
    size_t caplen, origlen, i = 0;
    char *path;
    int rc;

    (void)state;
    build_capture(&f, true);
    path = write_pcap(&f);
    assert_int_equal(rpcap_open(&r, path), 0);
    assert_false(r.swap);
    assert_false(r.nsec);
    assert_int_equal(r.linktype, RPCAP_LINKTYPE_ETHERNET);
    assert_int_equal(r.snaplen, RPCAP_MAX_REC);
    while ((rc = rpcap_next(&r, buf, sizeof(buf), &caplen, &origlen)) > 0) {
        assert_true(i < f.n);
        assert_int_equal(caplen, f.len[i]);
        assert_int_equal(origlen, f.len[i]);
        assert_memory_equal(buf, f.buf[i], caplen);
        i++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(i, f.n);
    assert_int_equal(r.count, f.n);
    rpcap_close(&r);
    unlink(path);
    free(path);
}

/* Write @bytes as a file; returns its path. */
static char *write_raw(const uint8_t *bytes, size_t n)
{
    char *path = strdup("/tmp/kite-test-pcap.XXXXXX");
    int fd;

    assert_non_null(path);
    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, bytes, n), (ssize_t)n);
    close(fd);
    return path;
}

/* Big-endian file with nanosecond stamps; one record captured short. */
static void test_read_swapped_nsec(void **state)
{
    static const uint8_t file[] = {
        0xa1, 0xb2, 0x3c, 0x4d, 0x00, 0x02, 0x00, 0x04,
        0, 0, 0, 0, 0, 0, 0, 0,
        0x00, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 0x01,
        /* record: ts, ts, incl 16, orig 60 */
        0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 16, 0, 0, 0, 60,
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0x08, 0x06, 0, 1,
    };
    uint8_t buf[64];
    struct rpcap_reader r;
    struct rpcap_frame fr;
    size_t caplen, origlen;
    char *path;

    (void)state;
    path = write_raw(file, sizeof(file));
    assert_int_equal(rpcap_open(&r, path), 0);
    assert_true(r.swap);
    assert_true(r.nsec);
    assert_int_equal(r.snaplen, 32);
    assert_int_equal(rpcap_next(&r, buf, sizeof(buf), &caplen, &origlen), 1);
    assert_int_equal(caplen, 16);
    assert_int_equal(origlen, 60);
    assert_memory_equal(buf, file + 40, 16);
    assert_int_equal(rpcap_next(&r, buf, sizeof(buf), &caplen, &origlen), 0);
    rpcap_close(&r);
    rpcap_inspect(buf, caplen, origlen, 1, &fr);
    assert_true(fr.truncated);
    assert_int_equal(fr.kind, RPCAP_OTHER);
    assert_int_equal(fr.ethertype, 0x0806);
    unlink(path);
    free(path);
}

static void test_read_damaged(void **state)
{
    static struct frames f;
    static uint8_t buf[RPCAP_MAX_REC];
    uint8_t hdr[RPCAP_FILE_HDR_LEN];
    struct rpcap_reader r;
    size_t caplen, origlen;
    char *path;
    FILE *fp;
    long size;

    (void)state;
    /* Not a pcap (a pcapng section header block). */
    memset(hdr, 0, sizeof(hdr));
    hdr[0] = 0x0a;
    hdr[1] = 0x0d;
    hdr[2] = 0x0d;
    hdr[3] = 0x0a;
    path = write_raw(hdr, sizeof(hdr));
    assert_int_equal(rpcap_open(&r, path), -1);
    assert_non_null(strstr(r.err, "not a classic pcap"));
    unlink(path);
    free(path);

    /* Short header. */
    path = write_raw(hdr, 10);
    assert_int_equal(rpcap_open(&r, path), -1);
    unlink(path);
    free(path);

    /* Link type 101 (raw IP). */
    build_capture(&f, false);
    path = write_pcap(&f);
    fp = fopen(path, "r+b");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, 20, SEEK_SET), 0);
    assert_int_equal(fputc(101, fp), 101);
    fclose(fp);
    assert_int_equal(rpcap_open(&r, path), -1);
    assert_non_null(strstr(r.err, "not Ethernet"));
    unlink(path);
    free(path);

    /* The last record cut short: the frames before it come, then -1. */
    path = write_pcap(&f);
    fp = fopen(path, "rb");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, 0, SEEK_END), 0);
    size = ftell(fp);
    fclose(fp);
    assert_int_equal(truncate(path, size - 3), 0);
    assert_int_equal(rpcap_open(&r, path), 0);
    for (size_t i = 0; i + 1 < f.n; i++) {
        assert_int_equal(rpcap_next(&r, buf, sizeof(buf), &caplen, &origlen),
                         1);
    }
    assert_int_equal(rpcap_next(&r, buf, sizeof(buf), &caplen, &origlen), -1);
    assert_non_null(strstr(r.err, "truncated"));
    rpcap_close(&r);

    /* A missing file. */
    unlink(path);
    assert_int_equal(rpcap_open(&r, path), -1);
    free(path);
}

/* ---- frame verdicts ---- */

static void test_verdicts(void **state)
{
    static struct frames f;
    struct rpcap_frame v[MAX_FRAMES];
    char line[256];
    size_t i;

    (void)state;
    build_capture(&f, true);
    inspect_all(&f, v);

    /* 1: ARP. */
    assert_int_equal(v[0].kind, RPCAP_OTHER);
    assert_int_equal(v[0].ipver, 0);
    assert_false(rpcap_roce_valid(&v[0]));
    rpcap_format(&v[0], line, sizeof(line));
    assert_string_equal(line, "frame 1 src 52:54:00:4b:00:02 ethertype 0x0806");

    /* 2: Kite's READ request, every field. */
    assert_int_equal(v[1].kind, RPCAP_ROCE);
    assert_true(rpcap_roce_valid(&v[1]));
    assert_int_equal(v[1].ipver, 4);
    assert_int_equal(v[1].opcode, KITE_OP_READ_REQ);
    assert_int_equal(v[1].dqpn, PEER_QPN);
    assert_int_equal(v[1].psn, 100);
    assert_true(v[1].ackreq);
    assert_int_equal(v[1].paylen, 0);
    assert_true(v[1].has_reth);
    assert_int_equal(v[1].reth_len, 600);
    assert_int_equal(v[1].reth_va, 0x1000);
    assert_false(v[1].has_aeth);
    assert_int_equal(v[1].sport, 0xc123);
    rpcap_format(&v[1], line, sizeof(line));
    assert_string_equal(line,
                        "frame 2 src 52:54:00:4b:00:01 ipv4 op 0x0c "
                        "RC_READ_REQUEST qp 0x000012 psn 100 ackreq 1 "
                        "paylen 0 reth 600 icrc ok");

    /* 3: READ_RESPONSE_FIRST: payload and AETH. */
    assert_true(rpcap_roce_valid(&v[2]));
    assert_int_equal(v[2].paylen, PMTU);
    assert_true(v[2].has_aeth);
    assert_int_equal(v[2].aeth_syn, KITE_AETH_ACK_UNLIMITED);
    assert_int_equal(v[2].aeth_msn, 7);
    /* 5: LAST with 88 bytes (pad 0), 8: WRITE_LAST with 8. */
    assert_int_equal(v[4].paylen, 88);
    assert_int_equal(v[7].paylen, 8);
    assert_int_equal(v[5].reth_len, 520);

    /* 10: UDP to port 53: IP, not RoCE. */
    assert_int_equal(v[9].kind, RPCAP_OTHER);
    assert_int_equal(v[9].ipver, 4);
    rpcap_format(&v[9], line, sizeof(line));
    assert_string_equal(line, "frame 10 src 52:54:00:4b:00:01 ipv4 not-roce");

    /* 11: IPv6 SEND_ONLY with a corrupted ICRC: decoded, judged bad. */
    assert_int_equal(v[10].kind, RPCAP_ROCE);
    assert_int_equal(v[10].ipver, 6);
    assert_int_equal(v[10].opcode, KITE_OP_SEND_ONLY);
    assert_int_equal(v[10].paylen, 40);
    assert_true(v[10].icrc_known);
    assert_false(v[10].icrc_ok);
    assert_int_equal(v[10].icrc_wire ^ v[10].icrc_calc, 0x5a0000);
    assert_int_equal(v[10].parse, KITE_ROCE_BAD_ICRC);
    assert_false(rpcap_roce_valid(&v[10]));
    rpcap_format(&v[10], line, sizeof(line));
    assert_non_null(strstr(line, "ipv6 op 0x04 RC_SEND_ONLY"));
    assert_non_null(strstr(line, " icrc BAD ("));
    assert_non_null(strstr(line, "codec BAD_ICRC"));

    /* The own ICRC verdict agrees with the codec's on every RoCE frame. */
    for (i = 0; i < f.n; i++) {
        if (v[i].kind == RPCAP_ROCE) {
            assert_int_equal(v[i].icrc_ok, v[i].parse != KITE_ROCE_BAD_ICRC);
        }
    }
}

/* A frame cut short by the capture, and one with a bad IPv4 checksum. */
static void test_verdicts_broken(void **state)
{
    static struct frames f;
    struct rpcap_frame fr;

    (void)state;
    memset(&f, 0, sizeof(f));
    add_roce(&f, true, false, KITE_OP_WRITE_ONLY, 1, 100, 100);
    rpcap_inspect(f.buf[0], f.len[0] - 10, f.len[0], 1, &fr);
    assert_true(fr.truncated);
    assert_false(fr.icrc_known);
    assert_false(rpcap_roce_valid(&fr));

    f.buf[0][KITE_ETH_HLEN + 10] ^= 1;       /* IPv4 header checksum */
    rpcap_inspect(f.buf[0], f.len[0], f.len[0], 1, &fr);
    assert_int_equal(fr.parse, KITE_ROCE_MALFORMED);
    /* The ICRC does not cover the checksum: it is still right. */
    assert_true(fr.icrc_ok);
    assert_false(rpcap_roce_valid(&fr));
}

/* ---- the report (the tool's output) ---- */

static int report(const struct frames *f, const struct rpcap_opts *o,
                  char **text, struct rpcap_totals *t)
{
    char *path = write_pcap(f);
    size_t size;
    FILE *out = open_memstream(text, &size);
    int rc;

    assert_non_null(out);
    rc = rpcap_report(path, o, out, t);
    fclose(out);
    unlink(path);
    free(path);
    return rc;
}

static void opts(struct rpcap_opts *o, uint32_t min)
{
    memset(o, 0, sizeof(*o));
    o->have_mac = true;
    memcpy(o->mac, kite_mac, 6);
    o->check_read = o->check_write = true;
    o->pmtu = PMTU;
    o->min_msgs = min;
}

static void test_report_corrupt(void **state)
{
    static struct frames f;
    struct rpcap_opts o;
    struct rpcap_totals t;
    char *text;

    (void)state;
    build_capture(&f, true);
    opts(&o, 0);
    assert_int_equal(report(&f, &o, &text, &t), 1);
    assert_int_equal(t.frames, 11);
    assert_int_equal(t.other, 2);
    assert_int_equal(t.roce, 9);
    assert_int_equal(t.roce_valid, 8);
    assert_int_equal(t.icrc_ok, 8);
    assert_int_equal(t.icrc_bad, 1);
    assert_int_equal(t.ours, 3);
    assert_int_equal(t.ours_valid, 2);
    assert_int_equal(t.peer, 6);
    assert_int_equal(t.peer_valid, 6);
    assert_non_null(strstr(text, "\nframe 11 src 52:54:00:4b:00:01 ipv6"));
    assert_non_null(strstr(text, "\nresult icrc FAIL 9 RoCEv2 frames: 8 valid"));
    assert_non_null(strstr(text, "\nresult kite-frames FAIL 3 UDP/4791"));
    assert_non_null(strstr(text, "\nresult read-seq ok path MTU 256: Kite "
                           "requester 1 READs (1 multi-packet), peer "
                           "requester 0 (0 multi-packet), 0 broken\n"));
    assert_non_null(strstr(text, "\nresult write-seq ok path MTU 256: Kite "
                           "requester 0 WRITEs (0 multi-packet), peer "
                           "requester 1 (1 multi-packet), 0 broken\n"));
    free(text);
}

static void test_report_clean(void **state)
{
    static struct frames f;
    struct rpcap_opts o;
    char *text;

    (void)state;
    build_capture(&f, false);
    opts(&o, 0);
    o.quiet = true;
    assert_int_equal(report(&f, &o, &text, NULL), 0);
    assert_null(strstr(text, "frame 1 "));
    assert_non_null(strstr(text, "result icrc ok 9 RoCEv2 frames: 9 valid"));
    assert_non_null(strstr(text, "result kite-frames ok 3 UDP/4791"));
    assert_null(strstr(text, "FAIL"));
    free(text);

    /* One multi-packet message of each kind from each side is required. */
    opts(&o, 1);
    assert_int_equal(report(&f, &o, &text, NULL), 1);
    assert_non_null(strstr(text, "result read-seq FAIL"));
    assert_non_null(strstr(text, "too few multi-packet messages"));
    free(text);

    /* Without the Kite MAC no kite-frames result; all is the peer's. */
    add_read(&f, 300);
    add_write(&f, 7000);
    opts(&o, 1);
    assert_int_equal(report(&f, &o, &text, NULL), 1);      /* Kite: no WRITE */
    free(text);
    o.have_mac = false;
    assert_int_equal(report(&f, &o, &text, NULL), 0);
    assert_null(strstr(text, "kite-frames"));
    assert_non_null(strstr(text, "peer requester 2 (2 multi-packet)"));
    free(text);

    /* A file that is not there. */
    {
        size_t size;
        FILE *out = open_memstream(&text, &size);

        assert_int_equal(rpcap_report("/nonexistent/x.pcap", &o, out, NULL),
                         2);
        fclose(out);
        assert_non_null(strstr(text, "error: "));
        free(text);
    }
}

/* ---- sequences ---- */

static uint32_t seq_bad(const struct frames *f, bool write, char **why)
{
    struct rpcap_frame v[MAX_FRAMES];
    struct rpcap_seq s;
    size_t size;
    FILE *out = open_memstream(why, &size);

    assert_non_null(out);
    inspect_all(f, v);
    rpcap_check_seq(v, f->n, write, PMTU, kite_mac, out, "t", &s);
    fclose(out);
    assert_int_equal(s.msgs[0] + s.msgs[1], 1);
    return s.bad;
}

static void expect_bad(const struct frames *f, bool write, const char *what)
{
    char *why;

    assert_int_equal(seq_bad(f, write, &why), 1);
    if (!strstr(why, what)) {
        fail_msg("wanted '%s' in '%s'", what, why);
    }
    free(why);
}

static void expect_good(const struct frames *f, bool write)
{
    char *why;

    if (seq_bad(f, write, &why)) {
        fail_msg("unexpected: %s", why);
    }
    free(why);
}

static void test_read_rules(void **state)
{
    static struct frames f;

    (void)state;
    /* ONLY for a read of at most one PMTU. */
    memset(&f, 0, sizeof(f));
    add_roce(&f, true, false, KITE_OP_READ_REQ, 10, 0, PMTU);
    add_roce(&f, false, false, KITE_OP_READ_RESP_ONLY, 10, PMTU, 0);
    expect_good(&f, false);

    /* PSN wrap inside the message, other traffic between the packets. */
    memset(&f, 0, sizeof(f));
    add_roce(&f, true, false, KITE_OP_READ_REQ, KITE_PSN_MASK, 0, 600);
    add_roce(&f, false, false, KITE_OP_READ_RESP_FIRST, KITE_PSN_MASK, PMTU, 0);
    add_arp(&f);
    add_roce(&f, false, false, KITE_OP_ACK, 77, 0, 0);
    add_roce(&f, false, false, KITE_OP_READ_RESP_MIDDLE, 0, PMTU, 0);
    add_roce(&f, false, false, KITE_OP_READ_RESP_LAST, 1, 88, 0);
    expect_good(&f, false);

    /* Responses sent again (a duplicate request) are skipped. */
    memset(&f, 0, sizeof(f));
    add_roce(&f, true, false, KITE_OP_READ_REQ, 10, 0, 600);
    add_roce(&f, false, false, KITE_OP_READ_RESP_FIRST, 10, PMTU, 0);
    add_roce(&f, false, false, KITE_OP_READ_RESP_MIDDLE, 11, PMTU, 0);
    add_roce(&f, false, false, KITE_OP_READ_RESP_FIRST, 10, PMTU, 0);
    add_roce(&f, false, false, KITE_OP_READ_RESP_MIDDLE, 11, PMTU, 0);
    add_roce(&f, false, false, KITE_OP_READ_RESP_LAST, 12, 88, 0);
    expect_good(&f, false);

    /* A missing PSN. */
    memset(&f, 0, sizeof(f));
    add_roce(&f, true, false, KITE_OP_READ_REQ, 10, 0, 600);
    add_roce(&f, false, false, KITE_OP_READ_RESP_FIRST, 10, PMTU, 0);
    add_roce(&f, false, false, KITE_OP_READ_RESP_LAST, 12, 88, 0);
    expect_bad(&f, false, "response 2 (frame 3) has PSN 12, not 11");

    /* ONLY where three packets are due. */
    memset(&f, 0, sizeof(f));
    add_roce(&f, true, false, KITE_OP_READ_REQ, 10, 0, 600);
    add_roce(&f, false, false, KITE_OP_READ_RESP_ONLY, 10, 600, 0);
    add_roce(&f, false, false, KITE_OP_READ_RESP_MIDDLE, 11, PMTU, 0);
    add_roce(&f, false, false, KITE_OP_READ_RESP_LAST, 12, 88, 0);
    expect_bad(&f, false, "is RC_READ_RESPONSE_ONLY, the rules want "
               "RC_READ_RESPONSE_FIRST");

    /* A FIRST shorter than the path MTU (the data still adds up). */
    memset(&f, 0, sizeof(f));
    add_roce(&f, true, false, KITE_OP_READ_REQ, 10, 0, 600);
    add_roce(&f, false, false, KITE_OP_READ_RESP_FIRST, 10, 200, 0);
    add_roce(&f, false, false, KITE_OP_READ_RESP_MIDDLE, 11, PMTU, 0);
    add_roce(&f, false, false, KITE_OP_READ_RESP_LAST, 12, 144, 0);
    expect_bad(&f, false, "carries 200 bytes, not the path MTU 256");

    /* Fewer bytes than the RETH asked for. */
    memset(&f, 0, sizeof(f));
    add_roce(&f, true, false, KITE_OP_READ_REQ, 10, 0, 600);
    add_roce(&f, false, false, KITE_OP_READ_RESP_FIRST, 10, PMTU, 0);
    add_roce(&f, false, false, KITE_OP_READ_RESP_MIDDLE, 11, PMTU, 0);
    add_roce(&f, false, false, KITE_OP_READ_RESP_LAST, 12, 80, 0);
    expect_bad(&f, false, "592 bytes in 3 packets, RETH says 600");

    /* The responses never come. */
    memset(&f, 0, sizeof(f));
    add_roce(&f, true, false, KITE_OP_READ_REQ, 10, 0, 600);
    add_roce(&f, false, false, KITE_OP_READ_RESP_FIRST, 10, PMTU, 0);
    expect_bad(&f, false, "1 of 3 responses in the capture");
    memset(&f, 0, sizeof(f));
    add_roce(&f, true, false, KITE_OP_READ_REQ, 10, 0, 600);
    add_roce(&f, false, false, KITE_OP_ACK, 10, 0, 0);
    expect_bad(&f, false, "no read response with PSN 10");

    /* A response with a bad ICRC. */
    memset(&f, 0, sizeof(f));
    add_read(&f, 10);
    f.buf[2][f.len[2] - 1] ^= 1;
    expect_bad(&f, false, "packet 2 of 3 (frame 3) is not valid");
}

static void test_write_rules(void **state)
{
    static struct frames f;

    (void)state;
    memset(&f, 0, sizeof(f));
    add_write(&f, 5000);
    expect_good(&f, true);

    /* LAST_IMM ends a message too; ONLY for one packet; a later ACK. */
    memset(&f, 0, sizeof(f));
    add_roce(&f, true, false, KITE_OP_WRITE_FIRST, 1, PMTU, 300);
    add_roce(&f, true, false, KITE_OP_WRITE_LAST_IMM, 2, 44, 0);
    add_roce(&f, true, false, KITE_OP_SEND_ONLY, 3, 10, 0);
    add_roce(&f, false, false, KITE_OP_ACK, 3, 0, 0);
    expect_good(&f, true);
    memset(&f, 0, sizeof(f));
    add_roce(&f, true, false, KITE_OP_WRITE_ONLY, 1, PMTU, PMTU);
    expect_good(&f, true);

    /* ONLY for more than a PMTU. */
    memset(&f, 0, sizeof(f));
    add_roce(&f, true, false, KITE_OP_WRITE_ONLY, 1, 300, 300);
    expect_bad(&f, true, "RC_WRITE_ONLY with 300 bytes (path MTU 256)");

    /* A MIDDLE shorter than the PMTU. */
    memset(&f, 0, sizeof(f));
    add_roce(&f, false, false, KITE_OP_WRITE_FIRST, 5000, PMTU, 520);
    add_roce(&f, false, false, KITE_OP_WRITE_MIDDLE, 5001, 250, 0);
    add_roce(&f, false, false, KITE_OP_WRITE_LAST, 5002, 14, 0);
    add_roce(&f, true, false, KITE_OP_ACK, 5002, 0, 0);
    expect_bad(&f, true, "packet 2 of 3 (frame 2, RC_WRITE_MIDDLE) carries "
               "250 bytes");

    /* LAST too early: the message needs three packets. */
    memset(&f, 0, sizeof(f));
    add_roce(&f, false, false, KITE_OP_WRITE_FIRST, 5000, PMTU, 520);
    add_roce(&f, false, false, KITE_OP_WRITE_LAST, 5001, PMTU, 0);
    add_roce(&f, false, false, KITE_OP_WRITE_LAST, 5002, 8, 0);
    add_roce(&f, true, false, KITE_OP_ACK, 5002, 0, 0);
    expect_bad(&f, true, "is RC_WRITE_LAST, the rules want RC_WRITE_MIDDLE");

    /* A PSN skipped. */
    memset(&f, 0, sizeof(f));
    add_roce(&f, false, false, KITE_OP_WRITE_FIRST, 5000, PMTU, 520);
    add_roce(&f, false, false, KITE_OP_WRITE_MIDDLE, 5002, PMTU, 0);
    expect_bad(&f, true, "packet 2 (frame 2) has PSN 5002, not 5001");

    /* No ACK; an ACK short of the last PSN; a NAK. */
    memset(&f, 0, sizeof(f));
    add_roce(&f, false, false, KITE_OP_WRITE_FIRST, 5000, PMTU, 520);
    add_roce(&f, false, false, KITE_OP_WRITE_MIDDLE, 5001, PMTU, 0);
    add_roce(&f, false, false, KITE_OP_WRITE_LAST, 5002, 8, 0);
    expect_bad(&f, true, "no ACK covering the last PSN 5002");
    add_roce(&f, true, false, KITE_OP_ACK, 5001, 0, 0);
    expect_bad(&f, true, "no ACK covering the last PSN 5002");
    /* An ACK for a PSN the requester never sent (another QP's). */
    add_roce(&f, true, false, KITE_OP_ACK, 9000, 0, 0);
    expect_bad(&f, true, "no ACK covering the last PSN 5002");
    /* A NAK at the PSN is no ACK. */
    {
        struct kite_roce_pkt p;

        assert_int_equal(kite_roce_parse(f.buf[3], f.len[3], &p),
                         KITE_ROCE_OK);
        p.aeth_syndrome = KITE_AETH_NAK_PSN_SEQ;
        p.psn = 5002;
        f.len[f.n] = kite_roce_build(f.buf[f.n], sizeof(f.buf[0]), &p);
        f.n++;
    }
    expect_bad(&f, true, "no ACK covering the last PSN 5002");
    /* The ACK of a later message covers it (cumulative). */
    add_roce(&f, false, false, KITE_OP_SEND_ONLY, 5003, 4, 0);
    add_roce(&f, true, false, KITE_OP_ACK, 5003, 0, 0);
    expect_good(&f, true);
}

/*
 * SEND with invalidate: SEND_LAST_INV and SEND_ONLY_INV frames (the IETH
 * between BTH and payload) are valid RoCEv2 with their ICRC checked over
 * the IETH, count as requests between a WRITE and its ACK, and a damaged
 * IETH byte is a bad ICRC.
 */
static void test_send_inv_frames(void **state)
{
    static struct frames f;
    struct rpcap_frame v[MAX_FRAMES];
    struct rpcap_opts o;
    char line[256], *text;
    size_t ieth = KITE_ETH_HLEN + 20 + KITE_UDP_HDR_LEN + KITE_BTH_LEN;
    struct kite_roce_pkt p;

    (void)state;
    memset(&f, 0, sizeof(f));
    add_roce(&f, true, false, KITE_OP_WRITE_FIRST, 40, PMTU, 300);
    add_roce(&f, true, false, KITE_OP_WRITE_LAST, 41, 44, 0);
    add_roce(&f, true, false, KITE_OP_SEND_FIRST, 42, PMTU, 0);
    add_roce(&f, true, false, KITE_OP_SEND_LAST_INV, 43, 10, 0);
    add_roce(&f, true, false, KITE_OP_SEND_ONLY_INV, 44, 0, 0);
    add_roce(&f, false, false, KITE_OP_ACK, 44, 0, 0);
    inspect_all(&f, v);
    assert_true(rpcap_roce_valid(&v[3]));
    assert_int_equal(v[3].paylen, 10);
    assert_int_equal(v[3].pad, 2);
    assert_true(rpcap_roce_valid(&v[4]));
    assert_int_equal(v[4].paylen, 0);
    rpcap_format(&v[3], line, sizeof(line));
    assert_string_equal(line,
                        "frame 4 src 52:54:00:4b:00:01 ipv4 op 0x16 "
                        "RC_SEND_LAST_INV qp 0x000012 psn 43 ackreq 0 "
                        "paylen 10 icrc ok");
    assert_int_equal(kite_roce_parse(f.buf[3], f.len[3], &p), KITE_ROCE_OK);
    assert_int_equal(p.ieth_rkey, 0x5e0142);
    expect_good(&f, true);
    opts(&o, 0);
    assert_int_equal(report(&f, &o, &text, NULL), 0);
    assert_non_null(strstr(text, "result icrc ok 6 RoCEv2 frames: 6 valid"));
    free(text);
    /* The IETH is covered by the ICRC. */
    f.buf[3][ieth + 2] ^= 0x10;
    inspect_all(&f, v);
    assert_false(rpcap_roce_valid(&v[3]));
    assert_false(v[3].icrc_ok);
    assert_int_equal(v[3].parse, KITE_ROCE_BAD_ICRC);
    assert_int_equal(report(&f, &o, &text, NULL), 1);
    assert_non_null(strstr(text, "result icrc FAIL 6 RoCEv2 frames: 5 valid"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_back),
        cmocka_unit_test(test_read_swapped_nsec),
        cmocka_unit_test(test_read_damaged),
        cmocka_unit_test(test_verdicts),
        cmocka_unit_test(test_verdicts_broken),
        cmocka_unit_test(test_report_corrupt),
        cmocka_unit_test(test_report_clean),
        cmocka_unit_test(test_read_rules),
        cmocka_unit_test(test_write_rules),
        cmocka_unit_test(test_send_inv_frames),
    };
    size_t i;

    for (i = 0; i < sizeof(payload); i++) {
        payload[i] = (uint8_t)(i * 7 + 1);
    }
    return cmocka_run_group_tests_name("roce_pcap", tests, NULL, NULL);
}
