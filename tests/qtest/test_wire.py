# SPDX-License-Identifier: GPL-2.0-or-later
"""The wire between devices: fault injection (drops, duplicates,
reordering, receive drops) and RC between two devices on a hub."""

import struct
import time

from device import MAC_A, MAC_B, eth_post_rx, eth_send, eth_setup, \
    frame_to, gid_payload, hmp, mac_bytes, stats
from harness import check, check_eq, clock_stepper, test, wait_for
from hw import C
from rdma import V4_GID, V6_DGID, V6_GID, Node, check_cqe, loopback_pair, \
    pattern, raddr


@test("main")
def test_dp_wire_faults(env):
    n, a, a_cq, b, b_cq = loopback_pair(env)
    d = n.d
    q = env.q
    check_eq(q.qmp("qom-get", path="/machine/peripheral/k0",
                   property="x-wire-seed"), 1, "default x-wire-seed")
    check_eq(q.qmp("qom-get", path="/machine/peripheral/k1",
                   property="x-wire-seed"), 7, "x-wire-seed set by -device")
    out = hmp(env, "qom-set /machine/peripheral/k0 x-wire-drop-ppm 1000001")
    check("at most" in out, "out-of-range ppm accepted: %r" % out)
    seg = raddr(n.va(0x8000), n.key)
    n.write(0, pattern(64, 3))
    try:
        # Every frame dropped: nothing completes, wire_dropped counts.
        hmp(env, "qom-set /machine/peripheral/k0 x-wire-drop-ppm 1000000")
        check_eq(q.qmp("qom-get", path="/machine/peripheral/k0",
                       property="x-wire-drop-ppm"), 1000000, "qom-get")
        a.post_send(C.KITE_WQE_WRITE, [(n.va(0), 64, n.key)], seg)
        wait_for(lambda: stats(d)["wire_dropped"] >= 1, "dropped frame")
        time.sleep(0.05)
        check(a_cq.empty(), "completion without a wire")
        # The wire works again; the retransmit timer (virtual time) resends.
        hmp(env, "qom-set /machine/peripheral/k0 x-wire-drop-ppm 0")
        q.cmd("clock_step %d" % (300 * 1000 * 1000))
        check_cqe(a_cq.poll("WRITE after retransmission",
                            step=clock_stepper(q, 100000000)),
                  a.qpn, 0, C.KITE_CQE_WRITE, 64, what="retransmitted")
        check_eq(n.read(0x8000, 64), pattern(64, 3), "written bytes")
        cnt = stats(d)
        check(cnt["roce_retransmits"] >= 1 and cnt["roce_timeouts"] >= 1,
              "retransmit counters: %r" % cnt)
        # Every frame duplicated: the responder sees duplicates, the data
        # and completions are exactly once.
        hmp(env, "qom-set /machine/peripheral/k0 x-wire-dup-ppm 1000000")
        msg = pattern(2500, 11)
        n.write(0x1000, msg)
        rs = b.post_recv(n.va(0x4000), 0x1000, n.key)
        ss = a.post_send(C.KITE_WQE_SEND, [(n.va(0x1000), len(msg), n.key)])
        check_cqe(a_cq.poll("SEND with duplicates"), a.qpn, ss,
                  C.KITE_CQE_SEND, len(msg), what="dup send")
        check_cqe(b_cq.poll("RECV with duplicates"), b.qpn, rs,
                  C.KITE_CQE_RECV, len(msg), what="dup recv")
        check_eq(n.read(0x4000, len(msg)), msg, "received bytes")
        wait_for(lambda: stats(d)["roce_dup_requests"] >= 1,
                 "duplicate requests counted")
        time.sleep(0.02)
        check(b_cq.empty(), "a second RECV completion")
        # Reordering: every other frame held back and sent after the next
        # one (a lone held frame goes out on a short timer).
        hmp(env, "qom-set /machine/peripheral/k0 x-wire-dup-ppm 0")
        hmp(env, "qom-set /machine/peripheral/k0 x-wire-reorder-ppm 1000000")
        for i in range(3):
            rs = b.post_recv(n.va(0x4000), 0x1000, n.key)
            ss = a.post_send(C.KITE_WQE_SEND,
                             [(n.va(0x1000), len(msg), n.key)])
            step = clock_stepper(q, 1000000)
            check_cqe(a_cq.poll("reordered SEND %d" % i, step=step), a.qpn,
                      ss, C.KITE_CQE_SEND, len(msg), what="reordered send")
            check_cqe(b_cq.poll("reordered RECV %d" % i, step=step), b.qpn,
                      rs, C.KITE_CQE_RECV, len(msg), what="reordered recv")
            check_eq(n.read(0x4000, len(msg)), msg, "reordered bytes")
    finally:
        for prop in ("x-wire-drop-ppm", "x-wire-dup-ppm",
                     "x-wire-reorder-ppm"):
            hmp(env, "qom-set /machine/peripheral/k0 %s 0" % prop)


@test("main")
def test_dp_two_devices_eth_ring_full(env):
    """RC between two NICs on a hub while b's Ethernet ring has no buffer.

    A plain Ethernet frame for b waits for an RX buffer; the RoCEv2 frames
    behind it still reach b's engine at once.
    """
    da, db = env.dev[0], env.dev[1]
    na, nb = Node(da, MAC_A), Node(db, MAC_B)
    eth_setup(na.d)
    eth_setup(nb.d)
    eth_send(da, frame_to(mac_bytes(MAC_B), mac_bytes(MAC_A), 100, 1))
    a_cq, b_cq = na.cq(), nb.cq()
    a = na.qp(a_cq, a_cq)
    b = nb.qp(b_cq, b_cq)
    # Both use GID index 1 (IPv6); b's GID table holds a different address.
    db.exec_ok(C.KITE_CMD_DEL_GID, gid_payload(bytes(16), 1))
    db.exec_ok(C.KITE_CMD_ADD_GID, gid_payload(V6_DGID, 1, 1))
    a.connect(b.qpn, V6_DGID, nb.mac, 0x10, 0x20, net_type=1, sgid_index=1)
    b.connect(a.qpn, V6_GID, na.mac, 0x20, 0x10, net_type=1, sgid_index=1)
    msg = pattern(4000, 21)
    na.write(0, msg)
    rs = b.post_recv(nb.va(0x2000), 0x2000, nb.key)
    ss = a.post_send(C.KITE_WQE_SEND, [(na.va(0), len(msg), na.key)])
    check_cqe(a_cq.poll("SEND over the hub"), a.qpn, ss, C.KITE_CQE_SEND,
              len(msg), what="send")
    check_cqe(b_cq.poll("RECV over the hub"), b.qpn, rs, C.KITE_CQE_RECV,
              len(msg), what="recv")
    check_eq(nb.read(0x2000, len(msg)), msg, "received bytes")
    check_eq(db.rd(C.KITE_REG_ETH_RX_CI), 0, "Ethernet frame delivered")
    # The Ethernet frame is still waiting and arrives with a buffer.
    buf = eth_post_rx(nb.d)
    wait_for(lambda: db.rd(C.KITE_REG_ETH_RX_CI) == 1, "Ethernet frame")
    check_eq(db.q.read(buf, 114),
             frame_to(mac_bytes(MAC_B), mac_bytes(MAC_A), 100, 1),
             "Ethernet frame bytes")
    # Link down: a's frames are dropped and counted; the requester retries
    # once the link is back.
    before = stats(da)["eth_tx_errors"]
    try:
        env.q.qmp("set_link", name="k0", up=False)
        rs = b.post_recv(nb.va(0x2000), 0x2000, nb.key)
        ss = a.post_send(C.KITE_WQE_SEND, [(na.va(0), 100, na.key)])
        wait_for(lambda: stats(da)["eth_tx_errors"] > before,
                 "frame dropped with the link down")
    finally:
        env.q.qmp("set_link", name="k0", up=True)
    step = clock_stepper(env.q, 100000000)
    check_cqe(a_cq.poll("SEND after link up", step=step), a.qpn, ss,
              C.KITE_CQE_SEND, 100, what="send after link up")
    check_cqe(b_cq.poll("RECV after link up", step=step), b.qpn, rs,
              C.KITE_CQE_RECV, 100, what="recv after link up")


def roce_v4_frame(dst_mac, src_mac, dst_ip, psn, dport=4791):
    """A short IPv4 RoCEv2 frame: RC SEND ONLY, 4 bytes, zero ICRC."""
    bth = struct.pack("!BBHII", 0x04, 0, 0xffff, 0x123, psn) + bytes(8)
    udp = struct.pack("!HHHH", 0xc000, dport, 8 + len(bth), 0) + bth
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64,
                      17, 0, bytes([198, 18, 0, 9]), dst_ip)
    csum = sum(struct.unpack("!10H", hdr))
    while csum >> 16:
        csum = (csum & 0xffff) + (csum >> 16)
    hdr = hdr[:10] + struct.pack("!H", ~csum & 0xffff) + hdr[12:]
    return dst_mac + src_mac + b"\x08\x00" + hdr + udp


@test("main")
def test_dp_wire_rx_drop(env):
    """x-wire-rx-drop-ppm drops RoCEv2 frames received from the netdev.

    Frames come from k0's Ethernet ring to k1 (hub): at 25% the dropped
    ones are counted in k1's wire_dropped and the rest reach k1's engine;
    other frames are never dropped; RC traffic between the two devices
    recovers by retransmission; loopback frames are not affected.
    """
    da, db = env.dev[0], env.dev[1]
    q = env.q
    na, nb = Node(da, MAC_A), Node(db, MAC_B)
    eth_setup(da)
    eth_setup(db)
    mac_a, mac_b = mac_bytes(MAC_A), mac_bytes(MAC_B)
    k1 = "/machine/peripheral/k1"
    try:
        out = hmp(env, "qom-set %s x-wire-rx-drop-ppm 1000001" % k1)
        check("at most" in out, "out-of-range ppm accepted: %r" % out)
        hmp(env, "qom-set %s x-wire-seed 7" % k1)
        hmp(env, "qom-set %s x-wire-rx-drop-ppm 250000" % k1)
        check_eq(q.qmp("qom-get", path=k1, property="x-wire-rx-drop-ppm"),
                 250000, "qom-get x-wire-rx-drop-ppm")
        # RoCEv2 frames for k1's IPv4 GID (198.18.0.1): the ones not
        # dropped reach the engine (rx_packets; bad ICRC).
        nframes = 400
        s0, a0 = stats(db), stats(da)
        for i in range(nframes):
            eth_send(da, roce_v4_frame(mac_b, mac_a, V4_GID[12:], i))
        wait_for(lambda: stats(db)["wire_dropped"] - s0["wire_dropped"] +
                 stats(db)["roce_rx_packets"] - s0["roce_rx_packets"] ==
                 nframes, "every frame dropped or received")
        s1 = stats(db)
        dropped = s1["wire_dropped"] - s0["wire_dropped"]
        # 100 expected (sd 8.7); the seed makes it the same on every run.
        check(60 <= dropped <= 140, "%d of %d frames dropped at 25%%" %
              (dropped, nframes))
        check_eq(s1["roce_icrc_errors"] - s0["roce_icrc_errors"],
                 nframes - dropped, "frames the engine saw (bad ICRC)")
        check_eq(stats(da)["wire_dropped"], a0["wire_dropped"],
                 "sender's wire_dropped")
        # Everything else passes: UDP to another port, for k1's ring.
        hmp(env, "qom-set %s x-wire-rx-drop-ppm 1000000" % k1)
        for i in range(3):
            eth_post_rx(db)
        for i in range(3):
            eth_send(da, roce_v4_frame(mac_b, mac_a, V4_GID[12:], i,
                                       dport=4792))
        wait_for(lambda: db.rd(C.KITE_REG_ETH_RX_CI) == 3,
                 "non-RoCE frames in the Ethernet ring")
        check_eq(stats(db)["wire_dropped"], s1["wire_dropped"],
                 "non-RoCE frames dropped")
        # RC from k0 to k1 (IPv6 GIDs): every request dropped at k1, no
        # completion; once the wire works the requester's retransmission
        # completes it.
        a_cq, b_cq = na.cq(), nb.cq()
        a = na.qp(a_cq, a_cq)
        b = nb.qp(b_cq, b_cq)
        db.exec_ok(C.KITE_CMD_DEL_GID, gid_payload(bytes(16), 1))
        db.exec_ok(C.KITE_CMD_ADD_GID, gid_payload(V6_DGID, 1, 1))
        a.connect(b.qpn, V6_DGID, nb.mac, 0x10, 0x20, net_type=1,
                  sgid_index=1)
        b.connect(a.qpn, V6_GID, na.mac, 0x20, 0x10, net_type=1,
                  sgid_index=1)
        na.write(0, pattern(64, 5))
        seg = raddr(nb.va(0x8000), nb.key)
        a.post_send(C.KITE_WQE_WRITE, [(na.va(0), 64, na.key)], seg)
        wait_for(lambda: stats(db)["wire_dropped"] > s1["wire_dropped"],
                 "WRITE dropped on receive")
        time.sleep(0.05)
        check(a_cq.empty(), "completion for a WRITE the responder lost")
        hmp(env, "qom-set %s x-wire-rx-drop-ppm 0" % k1)
        step = clock_stepper(q, 100000000)
        check_cqe(a_cq.poll("WRITE after retransmission", step=step), a.qpn,
                  0, C.KITE_CQE_WRITE, 64, what="retransmitted")
        check_eq(nb.read(0x8000, 64), pattern(64, 5), "written bytes")
        check(stats(da)["roce_retransmits"] >= 1, "no retransmission")
        # Both directions lossy (requests at k1, ACKs at k0): multi-packet
        # SENDs complete once each, in order, with their bytes.
        hmp(env, "qom-set %s x-wire-rx-drop-ppm 200000" % k1)
        hmp(env, "qom-set /machine/peripheral/k0 x-wire-rx-drop-ppm 200000")
        s2, a2 = stats(db), stats(da)
        step = clock_stepper(q, 10000000)
        for i in range(6):
            msg = pattern(3000, 40 + i)
            na.write(0x1000, msg)
            rs = b.post_recv(nb.va(0x4000), 0x1000, nb.key)
            ss = a.post_send(C.KITE_WQE_SEND, [(na.va(0x1000), len(msg),
                                                na.key)])
            check_cqe(a_cq.poll("lossy SEND %d" % i, step=step), a.qpn, ss,
                      C.KITE_CQE_SEND, len(msg), what="lossy send")
            check_cqe(b_cq.poll("lossy RECV %d" % i, step=step), b.qpn, rs,
                      C.KITE_CQE_RECV, len(msg), what="lossy recv")
            check_eq(nb.read(0x4000, len(msg)), msg, "lossy bytes %d" % i)
        check(stats(db)["wire_dropped"] + stats(da)["wire_dropped"] >
              s2["wire_dropped"] + a2["wire_dropped"], "nothing dropped")
        time.sleep(0.02)
        check(a_cq.empty() and b_cq.empty(), "an extra completion")
        # Loopback frames never pass the receive fault stage.
        hmp(env, "qom-set %s x-wire-rx-drop-ppm 1000000" % k1)
        n, la, la_cq, lb, lb_cq = loopback_pair(env, dev=1, mac=MAC_B)
        n.write(0, pattern(2500, 9))
        rs = lb.post_recv(n.va(0x4000), 0x1000, n.key)
        ss = la.post_send(C.KITE_WQE_SEND, [(n.va(0), 2500, n.key)])
        check_cqe(la_cq.poll("loopback SEND"), la.qpn, ss, C.KITE_CQE_SEND,
                  2500, what="loopback send")
        check_cqe(lb_cq.poll("loopback RECV"), lb.qpn, rs, C.KITE_CQE_RECV,
                  2500, what="loopback recv")
        check_eq(stats(db)["wire_dropped"], 0, "loopback frames dropped")
    finally:
        hmp(env, "qom-set %s x-wire-rx-drop-ppm 0" % k1)
        hmp(env, "qom-set /machine/peripheral/k0 x-wire-rx-drop-ppm 0")
        hmp(env, "qom-set %s x-wire-seed 7" % k1)
