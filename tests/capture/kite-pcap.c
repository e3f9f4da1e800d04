/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kite-pcap: judge the RoCEv2 frames of a link capture (classic pcap, as
 * QEMU's filter-dump writes it) with the project's own codec and ICRC code.
 *
 *   kite-pcap [-q] [-m KITE_MAC] [-r] [-w] [-p PMTU] [-n MIN] FILE
 *
 * Prints one line per frame (frame number, source MAC, IP version, BTH
 * opcode, destination QP, PSN, AckReq, payload length, RETH length, ICRC
 * verdict; -q: none), the totals, and "result NAME ok|FAIL DETAIL" lines:
 *   icrc         every UDP/4791 frame is a well-formed RoCEv2 frame whose
 *                ICRC is right
 *   kite-frames  (-m) the Kite MAC sent UDP/4791 frames, all valid RoCEv2
 *   read-seq     (-r) every RDMA READ: responses FIRST, MIDDLE..., LAST (or
 *                ONLY) with consecutive PSNs from the request's, PMTU-sized
 *                but the last, AETH on FIRST/LAST/ONLY, RETH length in all
 *   write-seq    (-w) every RDMA WRITE: FIRST (RETH), MIDDLE..., LAST with
 *                consecutive PSNs, PMTU-sized but the last, RETH length in
 *                all, then an ACK covering the last PSN
 * -p PMTU is the path MTU of the messages; -n MIN the number of
 * multi-packet messages each requester (Kite, the peer) must have sent
 * (default 1). Exit status 0 when every result is ok, 1 when one failed,
 * 2 when FILE cannot be read or the command line is wrong.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roce_pcap.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: kite-pcap [-q] [-m KITE_MAC] [-r] [-w] [-p PMTU] "
            "[-n MIN] FILE\n");
}

int main(int argc, char **argv)
{
    struct rpcap_opts o;
    unsigned long v;
    char *end;
    int c;

    memset(&o, 0, sizeof(o));
    o.min_msgs = 1;
    while ((c = getopt(argc, argv, "qm:rwp:n:h")) != -1) {
        switch (c) {
        case 'q':
            o.quiet = true;
            break;
        case 'm':
            if (rpcap_parse_mac(optarg, o.mac) < 0) {
                fprintf(stderr, "kite-pcap: bad MAC '%s'\n", optarg);
                return 2;
            }
            o.have_mac = true;
            break;
        case 'r':
            o.check_read = true;
            break;
        case 'w':
            o.check_write = true;
            break;
        case 'p':
        case 'n':
            v = strtoul(optarg, &end, 0);
            if (*end || v > 1u << 16 || (c == 'p' && v < 256)) {
                fprintf(stderr, "kite-pcap: bad -%c '%s'\n", c, optarg);
                return 2;
            }
            if (c == 'p') {
                o.pmtu = (uint32_t)v;
            } else {
                o.min_msgs = (uint32_t)v;
            }
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc - 1 || ((o.check_read || o.check_write) && !o.pmtu)) {
        usage(stderr);
        return 2;
    }
    return rpcap_report(argv[optind], &o, stdout, NULL);
}
