# SPDX-License-Identifier: GPL-2.0-or-later
"""UD multicast: ATTACH_MCAST/DETACH_MCAST, their errors and the group
limits the device advertises, and a datagram sent to a group by one
device delivered to every attached QP of the other, over IPv4 and IPv6."""

import hw
from device import MAC_A, MAC_B, destroy_payload, stats
from harness import check, check_eq, test
from hw import C
from rdma import V4_GID, V6_GID, Node, check_cqe, make_av, pattern, ud_seg

GRH = C.KITE_UD_GRH_LEN
QKEY = 0x5151
GROUP_V4 = bytes(10) + b"\xff\xff" + bytes([239, 1, 2, 3])
GROUP_V6 = bytes([0xff, 0x0e]) + bytes(10) + bytes([0, 1, 2, 3])


def mcast_payload(qpn, gid):
    return hw.pack("kite_cmd_mcast", gid=gid, qpn=qpn)


def attach(d, qpn, gid, uctx=0):
    return d.exec(C.KITE_CMD_ATTACH_MCAST, mcast_payload(qpn, gid),
                  uctx=uctx)[0]


def detach(d, qpn, gid, uctx=0):
    return d.exec(C.KITE_CMD_DETACH_MCAST, mcast_payload(qpn, gid),
                  uctx=uctx)[0]


def ud_up(n, q):
    n.r.modify_ok(q.qpn, "UD to INIT", state=C.KITE_QPS_INIT, pkey_index=0,
                  port=C.KITE_PORT_NUM, qkey=QKEY)
    n.r.modify_ok(q.qpn, "UD to RTR", state=C.KITE_QPS_RTR)
    n.r.modify_ok(q.qpn, "UD to RTS", state=C.KITE_QPS_RTS, sq_psn=1)


def group_gid(i):
    """The i-th of many distinct IPv6 groups."""
    return bytes([0xff, 0x0e]) + bytes(12) + i.to_bytes(2, "big")


@test("main")
def test_mcast_caps(env):
    d = env.dev[0]
    d.bring_up()
    check(d.rd(C.KITE_REG_CAP_FLAGS) & C.KITE_DEV_CAP_MCAST, "no CAP_MCAST")
    check_eq(d.rd(C.KITE_REG_CAP_MAX_MCAST_GRP), C.KITE_DEF_MAX_MCAST_GRP,
             "MAX_MCAST_GRP")
    check_eq(d.rd(C.KITE_REG_CAP_MAX_MCAST_QP), C.KITE_DEF_MAX_MCAST_QP,
             "MAX_MCAST_QP")
    st, _, raw = d.query(C.KITE_CMD_QUERY_DEVICE,
                         hw.sizeof("kite_device_attr"))
    check_eq(st, C.KITE_STS_OK, "QUERY_DEVICE")
    a = hw.unpack("kite_device_attr", raw)
    check_eq((a.max_mcast_grp, a.max_mcast_qp),
             (C.KITE_DEF_MAX_MCAST_GRP, C.KITE_DEF_MAX_MCAST_QP),
             "QUERY_DEVICE multicast limits")


@test("main")
def test_mcast_commands(env):
    """The errors: unknown QP, another context's QP, a QP that is not UD,
    a GID that is not multicast, a second attach, a detach of a QP that
    is not attached; then a full group, a full table, and DESTROY_QP
    detaching its QP from every group."""
    n = Node(env.dev[0], MAC_A)
    d = n.d
    cq = n.cq()
    ud = n.qp(cq, cq, qp_type=C.KITE_QPT_UD)
    other = n.qp(cq, cq, qp_type=C.KITE_QPT_UD)
    rc = n.qp(cq, cq)
    uctx = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    check_eq(attach(d, 0x00abcd, GROUP_V4), C.KITE_STS_BAD_HANDLE,
             "attach of an unknown QP")
    check_eq(attach(d, ud.qpn, GROUP_V4, uctx=uctx), C.KITE_STS_PERMISSION,
             "attach of another context's QP")
    check_eq(attach(d, rc.qpn, GROUP_V4), C.KITE_STS_BAD_PARAM,
             "attach of an RC QP")
    check_eq(attach(d, ud.qpn, V4_GID), C.KITE_STS_BAD_PARAM,
             "attach to a unicast GID")
    check_eq(attach(d, ud.qpn, bytes(10) + b"\xff\xff" + bytes([240, 0, 0,
                                                                 1])),
             C.KITE_STS_BAD_PARAM, "attach to 240.0.0.1")
    check_eq(attach(d, ud.qpn, GROUP_V4), C.KITE_STS_OK, "attach")
    check_eq(attach(d, ud.qpn, GROUP_V4), C.KITE_STS_EXISTS, "second attach")
    check_eq(detach(d, other.qpn, GROUP_V4), C.KITE_STS_BAD_PARAM,
             "detach of a QP not attached")
    check_eq(detach(d, ud.qpn, GROUP_V6), C.KITE_STS_BAD_PARAM,
             "detach from a group that does not exist")
    check_eq(detach(d, ud.qpn, GROUP_V4), C.KITE_STS_OK, "detach")
    check_eq(detach(d, ud.qpn, GROUP_V4), C.KITE_STS_BAD_PARAM,
             "second detach")

    # A full group. The QPs share rings: they carry no traffic.
    members = [ud]
    check_eq(attach(d, ud.qpn, GROUP_V4), C.KITE_STS_OK, "attach again")
    for _ in range(C.KITE_DEF_MAX_MCAST_QP - 1):
        q = n.qp(cq, cq, qp_type=C.KITE_QPT_UD)
        n.nqp -= 1
        check_eq(attach(d, q.qpn, GROUP_V4), C.KITE_STS_OK, "group member")
        members.append(q)
    check_eq(attach(d, other.qpn, GROUP_V4), C.KITE_STS_NO_RESOURCES,
             "attach to a full group")
    d.exec_ok(C.KITE_CMD_DESTROY_QP, destroy_payload(members.pop().qpn))
    check_eq(attach(d, other.qpn, GROUP_V4), C.KITE_STS_OK,
             "attach after a member's DESTROY_QP")

    # A full table: one group is in use.
    for i in range(C.KITE_DEF_MAX_MCAST_GRP - 1):
        check_eq(attach(d, ud.qpn, group_gid(i)), C.KITE_STS_OK,
                 "group %d" % i)
    last = group_gid(C.KITE_DEF_MAX_MCAST_GRP)
    check_eq(attach(d, other.qpn, last), C.KITE_STS_NO_RESOURCES,
             "attach with the table full")
    # DESTROY_QP detaches ud from all of its groups: the ones it alone
    # was in are free again.
    d.exec_ok(C.KITE_CMD_DESTROY_QP, destroy_payload(ud.qpn))
    check_eq(attach(d, other.qpn, last), C.KITE_STS_OK,
             "attach after DESTROY_QP freed the groups")
    check_eq(detach(d, ud.qpn, GROUP_V4), C.KITE_STS_BAD_HANDLE,
             "detach of a destroyed QP")


def delivery(env, v6):
    """Device A's UD QP sends to a group; of device B's QPs, r0 and r1
    are attached and r2 is not. r0 receives it; r1 has no receive and
    drops only its copy, counted; a unicast datagram to r2 after it shows
    the group datagram has been handled."""
    group = GROUP_V6 if v6 else GROUP_V4
    sgid, net = (1, 1) if v6 else (0, 0)
    da, db = env.dev[0], env.dev[1]
    na, nb = Node(da, MAC_A), Node(db, MAC_B)
    a_cq, b_cq = na.cq(), nb.cq()
    a = na.qp(a_cq, a_cq, qp_type=C.KITE_QPT_UD)
    r = [nb.qp(b_cq, b_cq, qp_type=C.KITE_QPT_UD) for _ in range(3)]
    ud_up(na, a)
    for q in r:
        ud_up(nb, q)
    for q in r[:2]:
        check_eq(attach(db, q.qpn, group), C.KITE_STS_OK, "attach")
    msg = pattern(300, 7 + v6)
    na.write(0, msg)
    rs0 = r[0].post_recv(nb.va(0x1000), GRH + 512, nb.key)
    rs2 = r[2].post_recv(nb.va(0x3000), GRH + 512, nb.key)
    s0 = stats(db)
    # The AV's MAC is not the group's: the device derives it from the GID.
    seg = ud_seg(make_av(group, dmac=b"\x02\x00\x00\x00\x00\x01",
                         sgid_index=sgid, net_type=net), C.KITE_MCAST_QPN,
                 QKEY)
    a.post_send(C.KITE_WQE_SEND, [(na.va(0), len(msg), na.key)], seg)
    a_cq.poll("group SEND")
    uni = ud_seg(make_av(V6_GID if v6 else V4_GID, dmac=nb.mac,
                         sgid_index=sgid, net_type=net), r[2].qpn, QKEY)
    a.post_send(C.KITE_WQE_SEND, [(na.va(0), 16, na.key)], uni)
    a_cq.poll("unicast SEND")
    check_cqe(b_cq.poll("group RECV"), r[0].qpn, rs0, C.KITE_CQE_RECV,
              GRH + len(msg), what="group recv")
    check_eq(nb.read(0x1000 + GRH, len(msg)), msg, "group payload")
    check_cqe(b_cq.poll("unicast RECV"), r[2].qpn, rs2, C.KITE_CQE_RECV,
              GRH + 16, what="unicast recv")
    check(b_cq.empty(), "a CQE for the QP without a receive or r2")
    s1 = stats(db)
    check_eq(s1["roce_mcast_rx"] - s0["roce_mcast_rx"], 1, "copies given")
    check_eq(s1["roce_mcast_dropped"] - s0["roce_mcast_dropped"], 1,
             "copies dropped")


@test("main")
def test_mcast_delivery_v4(env):
    delivery(env, False)


@test("main")
def test_mcast_delivery_v6(env):
    delivery(env, True)
