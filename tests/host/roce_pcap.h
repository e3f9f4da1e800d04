/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading link captures (classic libpcap files, as QEMU's filter-dump
 * object writes them) and judging the RoCEv2 frames in them with the
 * project's own codec (qemu/roce/kite_roce_pkt.c): per-frame decode and
 * ICRC verdict, and the packet sequences of RDMA READ and multi-packet
 * RDMA WRITE messages. Used by the capture checker tool
 * (tests/capture/kite-pcap.c) and by tests/host/test_roce_pcap.c.
 *
 * Copyright (c) 2026 The Kite authors
 */
#ifndef ROCE_PCAP_H
#define ROCE_PCAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Classic pcap: magic numbers (as read in the file's byte order). */
#define RPCAP_MAGIC_USEC        0xa1b2c3d4u
#define RPCAP_MAGIC_NSEC        0xa1b23c4du
#define RPCAP_FILE_HDR_LEN      24
#define RPCAP_REC_HDR_LEN       16
#define RPCAP_LINKTYPE_ETHERNET 1
/* Largest record this reader accepts (QEMU's filter-dump default snaplen). */
#define RPCAP_MAX_REC           65536

struct rpcap_reader {
    FILE *f;
    bool swap;                  /* file written in the other byte order */
    bool nsec;                  /* nanosecond timestamps */
    uint32_t linktype;
    uint32_t snaplen;
    uint32_t count;             /* records read so far */
    char err[160];              /* why open or next failed */
};

/* Open @path; 0 or -1 (reason in r->err). Only Ethernet captures. */
int rpcap_open(struct rpcap_reader *r, const char *path);
/*
 * Next record into @buf (@cap bytes): 1 with *caplen (bytes stored) and
 * *origlen (length on the wire), 0 at the end of the file, -1 on a damaged
 * or truncated file (reason in r->err).
 */
int rpcap_next(struct rpcap_reader *r, uint8_t *buf, size_t cap,
               size_t *caplen, size_t *origlen);
void rpcap_close(struct rpcap_reader *r);

/* Writing (tests): the file header, then one record per frame. */
int rpcap_write_header(FILE *f, uint32_t snaplen);
int rpcap_write_frame(FILE *f, const uint8_t *frame, size_t len,
                      uint32_t ts_sec, uint32_t ts_usec);

/* What one frame is. */
enum rpcap_kind {
    RPCAP_OTHER = 0,            /* not IPv4/IPv6 UDP to port 4791 */
    RPCAP_ROCE,                 /* UDP to port 4791 */
};

struct rpcap_frame {
    uint32_t no;                /* 1-based frame number in the file */
    uint8_t dmac[6], smac[6];
    uint16_t ethertype;
    enum rpcap_kind kind;
    bool truncated;             /* captured shorter than on the wire */
    /* IP and UDP (RPCAP_ROCE) */
    int ipver;                  /* 4, 6; 0 when not IP */
    uint8_t sip[16], dip[16];   /* IPv4 as ::ffff:a.b.c.d */
    uint16_t sport;
    /* The codec's verdict (enum kite_roce_parse_result). */
    int parse;
    /* ICRC computed by kite_roce_icrc() against the one in the frame. */
    bool icrc_known;            /* enough bytes to compute it */
    bool icrc_ok;
    uint32_t icrc_wire, icrc_calc;
    /* BTH and extended headers, decoded even when parse is not OK. */
    bool bth;                   /* a BTH was present */
    uint8_t opcode;
    bool ackreq;
    uint8_t pad;
    uint32_t dqpn, psn;
    int32_t paylen;             /* -1: unknown (bad lengths, opcode) */
    bool has_reth;
    uint64_t reth_va;
    uint32_t reth_len;
    bool has_aeth;
    uint8_t aeth_syn;
    uint32_t aeth_msn;
};

/*
 * Decode @frame (@caplen bytes stored of @origlen) into @fr (frame number
 * @no). Never fails: what cannot be decoded is marked as such.
 */
void rpcap_inspect(const uint8_t *frame, size_t caplen, size_t origlen,
                   uint32_t no, struct rpcap_frame *fr);

/* A RoCEv2 frame that is well formed and has the right ICRC. */
bool rpcap_roce_valid(const struct rpcap_frame *fr);

/* Name of BTH opcode @op ("RC READ_REQUEST", ...); "?" when unknown. */
const char *rpcap_op_name(uint8_t op);

/* One line (no newline) describing @fr into @buf. */
void rpcap_format(const struct rpcap_frame *fr, char *buf, size_t cap);

/* Totals over a capture; "ours" = frames whose source MAC is the Kite MAC. */
struct rpcap_totals {
    uint32_t frames;
    uint32_t other;
    uint32_t truncated;
    uint32_t roce;              /* UDP to port 4791 */
    uint32_t roce_valid;        /* parsed OK by the codec with good ICRC */
    uint32_t icrc_ok, icrc_bad, icrc_unknown;
    uint32_t malformed;         /* codec: MALFORMED */
    uint32_t ours, ours_valid;  /* UDP/4791 frames from the Kite MAC */
    uint32_t peer, peer_valid;  /* UDP/4791 frames from other MACs */
};

/* Options of a capture report (the tool's command line). */
struct rpcap_opts {
    bool have_mac;
    uint8_t mac[6];             /* the Kite NIC's MAC */
    bool quiet;                 /* no per-frame lines */
    bool check_read, check_write;
    uint32_t pmtu;              /* path MTU of the messages checked */
    uint32_t min_msgs;          /* multi-packet messages needed per side */
};

/* Result of the sequence checks. */
struct rpcap_seq {
    /* [0]: Kite is the requester, [1]: the peer is */
    uint32_t msgs[2];           /* messages checked */
    uint32_t multi[2];          /* of them with more than one packet */
    uint32_t bad;               /* messages that broke a rule */
};

/*
 * Check every READ request (@write false) or every WRITE_FIRST (@write
 * true) in @v (@n frames, in capture order) against the rules at path MTU
 * @pmtu; print one line per broken message to @out (prefix @tag) and fill
 * @s. Without @mac every requester counts as the peer.
 */
void rpcap_check_seq(const struct rpcap_frame *v, size_t n, bool write,
                     uint32_t pmtu, const uint8_t *mac, FILE *out,
                     const char *tag, struct rpcap_seq *s);

/*
 * The whole report on @path, printed to @out: one line per frame (unless
 * quiet), the totals, and the sequence checks asked for. Returns 0 when
 * every RoCEv2 frame is valid, every UDP/4791 frame from the Kite MAC is
 * RoCEv2 (with a MAC: at least one), and the sequence checks pass; 1 when
 * one of these fails; 2 when the file cannot be read. @t (may be NULL)
 * gets the totals.
 */
int rpcap_report(const char *path, const struct rpcap_opts *o, FILE *out,
                 struct rpcap_totals *t);

/* Parse "aa:bb:cc:dd:ee:ff"; 0 or -1. */
int rpcap_parse_mac(const char *s, uint8_t mac[6]);

#endif
