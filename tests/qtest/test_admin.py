# SPDX-License-Identifier: GPL-2.0-or-later
"""Admin commands: queries, SET_PORT, contexts and PDs, EQs, GIDs,
statistics, and the admin rings themselves."""

import hw
from device import ABI_VERSION, DEVICE_ATTR_SIZE, MAC_A, PORT_ATTR_SIZE, \
    SMALL_MAX_OBJECTS, STATS_SIZE, destroy_payload, eq_payload, gid_payload, \
    info_network, mac_bytes, out_buf_payload, port_attr, stats
from harness import check, check_eq, test
from hw import C, K


@test("main")
def test_query_device(env):
    d = env.dev[0]
    d.bring_up()
    d.take_irq(C.KITE_MSIX_ADMIN)
    st, out, raw = d.query(C.KITE_CMD_QUERY_DEVICE, DEVICE_ATTR_SIZE)
    check_eq(st, C.KITE_STS_OK, "status")
    check_eq(out[0], DEVICE_ATTR_SIZE, "out[0] (bytes written)")
    check(d.take_irq(C.KITE_MSIX_ADMIN), "no MSI-X on the admin vector")
    a = hw.unpack("kite_device_attr", raw)
    want = {
        "abi_version": ABI_VERSION,
        "page_size_cap": C.KITE_DEF_PAGE_SIZES,
        "max_mr_size": C.KITE_DEF_MAX_MR_SIZE, "max_qp": C.KITE_DEF_MAX_QP,
        "max_cq": C.KITE_DEF_MAX_CQ, "max_mr": C.KITE_DEF_MAX_MR,
        "max_pd": C.KITE_DEF_MAX_PD, "max_cqe": C.KITE_DEF_MAX_CQE,
        "max_qp_wr": C.KITE_DEF_MAX_QP_WR, "max_sge": C.KITE_DEF_MAX_SGE,
        "max_inline": C.KITE_DEF_MAX_INLINE, "max_eq": C.KITE_DEF_MAX_EQ,
        "max_uctx": C.KITE_MAX_UCTX, "max_gid": C.KITE_DEF_MAX_GID,
        "max_rd_atom": C.KITE_DEF_MAX_RD_ATOM,
        "cap_flags": d.rd(C.KITE_REG_CAP_FLAGS),
        "num_msix": C.KITE_MSIX_NUM, "vendor_id": C.KITE_PCI_VENDOR_ID,
        "vendor_part_id": C.KITE_PCI_DEVICE_ID,
        "hw_version": C.KITE_PCI_REVISION,
        "max_mcast_grp": C.KITE_DEF_MAX_MCAST_GRP,
        "max_mcast_qp": C.KITE_DEF_MAX_MCAST_QP,
        # EUI-64 of 52:54:00:4b:54:01
        "sys_image_guid": 0x505400fffe4b5401,
    }
    for k, v in want.items():
        check_eq(a[k], v, k)
    check(a["fw_version"] != 0, "fw_version is 0")


@test("main")
def test_query_port_set_port(env):
    d = env.dev[0]
    d.bring_up()
    st, out, raw = d.query(C.KITE_CMD_QUERY_PORT, PORT_ATTR_SIZE,
                           port=C.KITE_PORT_NUM)
    check_eq(st, C.KITE_STS_OK, "QUERY_PORT status")
    check_eq(out[0], PORT_ATTR_SIZE, "QUERY_PORT out[0]")
    p = hw.unpack("kite_port_attr", raw)
    check_eq(p["state"], C.KITE_PORT_ACTIVE, "state")
    check_eq(p["max_mtu"], C.KITE_MTU_4096, "max_mtu")
    check_eq(p["eth_mtu"], 1500, "eth_mtu")
    check_eq(p["active_mtu"], C.KITE_MTU_1024, "active_mtu at 1500")
    check_eq(p["mac"], mac_bytes(MAC_A), "mac")
    check_eq(p["gid_tbl_len"], C.KITE_DEF_MAX_GID, "gid_tbl_len")
    check(p["link_width"] and p["link_speed"], "link width/speed 0")
    st, _, _ = d.query(C.KITE_CMD_QUERY_PORT, PORT_ATTR_SIZE,
                       port=C.KITE_PORT_NUM + 1)
    check_eq(st, C.KITE_STS_BAD_PARAM, "QUERY_PORT port 2")

    def set_port(mask, mtu, mac, port=C.KITE_PORT_NUM, uctx=0):
        return d.exec(C.KITE_CMD_SET_PORT, hw.pack(
            "kite_cmd_set_port", mask=mask, mtu=mtu, mac=mac, port=port),
            uctx=uctx)[0]

    new_mac = bytes([0x02, 0x11, 0x22, 0x33, 0x44, 0x55])
    check_eq(set_port(C.KITE_SET_PORT_MTU | C.KITE_SET_PORT_MAC, 9000,
                      new_mac), C.KITE_STS_OK, "SET_PORT")
    p = port_attr(d)
    check_eq(p["eth_mtu"], 9000, "eth_mtu after SET_PORT")
    check_eq(p["active_mtu"], C.KITE_MTU_4096, "active_mtu at 9000")
    check_eq(p["mac"], new_mac, "mac after SET_PORT")
    check("macaddr=02:11:22:33:44:55" in info_network(env, "k0"),
          "info network does not show the SET_PORT MAC: %r" %
          info_network(env, "k0"))
    check_eq(d.rd(C.KITE_REG_PERM_MAC_LO), 0x4b005452, "PERM_MAC unchanged")
    for name, args in (
            ("MTU too small", (C.KITE_SET_PORT_MTU, 67, new_mac)),
            ("MTU too large", (C.KITE_SET_PORT_MTU, 9001, new_mac)),
            ("multicast MAC", (C.KITE_SET_PORT_MAC, 0, b"\x01" * 6)),
            ("zero MAC", (C.KITE_SET_PORT_MAC, 0, bytes(6))),
            ("unknown mask bit", (1 << 5, 1500, new_mac))):
        check_eq(set_port(*args), C.KITE_STS_BAD_PARAM, name)
    check_eq(set_port(C.KITE_SET_PORT_MTU, 1500, new_mac, port=0),
             C.KITE_STS_BAD_PARAM, "SET_PORT port 0")
    p = port_attr(d)
    check_eq(p["eth_mtu"], 9000, "eth_mtu after rejected SET_PORTs")
    # Only the kernel configures the port.
    uctx = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    check_eq(set_port(C.KITE_SET_PORT_MTU, 1500, new_mac, uctx=uctx),
             C.KITE_STS_PERMISSION, "SET_PORT from a user context")
    # Reset restores the defaults.
    d.bring_up()
    p = port_attr(d)
    check_eq(p["eth_mtu"], 1500, "eth_mtu after reset")
    check_eq(p["mac"], mac_bytes(MAC_A), "mac after reset")
    check("macaddr=" + MAC_A in info_network(env, "k0"),
          "info network after reset: %r" % info_network(env, "k0"))


@test("main")
def test_pd_alloc_dealloc(env):
    d = env.dev[0]
    d.bring_up()
    a = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    b = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    check(a != b and a != 0 and b != 0, "PD handles %d, %d" % (a, b))
    d.exec_ok(C.KITE_CMD_DEALLOC_PD, destroy_payload(a))
    st, _ = d.exec(C.KITE_CMD_DEALLOC_PD, destroy_payload(a))
    check_eq(st, C.KITE_STS_BAD_HANDLE, "double free")
    for h in (0, 0xffffffff, C.KITE_DEF_MAX_PD + 1):
        st, _ = d.exec(C.KITE_CMD_DEALLOC_PD, destroy_payload(h))
        check_eq(st, C.KITE_STS_BAD_HANDLE, "DEALLOC_PD %d" % h)
    d.exec_ok(C.KITE_CMD_DEALLOC_PD, destroy_payload(b))


@test("main")
def test_uctx_ownership(env):
    d = env.dev[0]
    d.bring_up()
    u1 = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    u2 = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    check(1 <= u1 <= C.KITE_MAX_UCTX and 1 <= u2 <= C.KITE_MAX_UCTX and
          u1 != u2, "uctx numbers %d, %d" % (u1, u2))
    pd = d.exec_ok(C.KITE_CMD_ALLOC_PD, uctx=u1)[0]
    st, _ = d.exec(C.KITE_CMD_DEALLOC_PD, destroy_payload(pd), uctx=u2)
    check_eq(st, C.KITE_STS_PERMISSION, "PD of uctx %d freed by %d" % (u1, u2))
    st, _ = d.exec(C.KITE_CMD_DEALLOC_PD, destroy_payload(pd), uctx=0)
    check_eq(st, C.KITE_STS_PERMISSION, "PD of uctx freed by the kernel")
    st, _ = d.exec(C.KITE_CMD_DEALLOC_UCTX, destroy_payload(u1))
    check_eq(st, C.KITE_STS_BUSY, "DEALLOC_UCTX with a live PD")
    st, _ = d.exec(C.KITE_CMD_DEALLOC_UCTX, destroy_payload(u1), uctx=u2)
    check_eq(st, C.KITE_STS_PERMISSION, "DEALLOC_UCTX by another context")
    st, _ = d.exec(C.KITE_CMD_ALLOC_UCTX, uctx=u1)
    check_eq(st, C.KITE_STS_PERMISSION, "ALLOC_UCTX from a user context")
    st, _ = d.exec(C.KITE_CMD_ALLOC_PD, uctx=200)
    check_eq(st, C.KITE_STS_PERMISSION, "ALLOC_PD from an unknown context")
    d.exec_ok(C.KITE_CMD_DEALLOC_PD, destroy_payload(pd), uctx=u1)
    d.exec_ok(C.KITE_CMD_DEALLOC_UCTX, destroy_payload(u1))
    # Only the kernel ends a context, even the context's own.
    st, _ = d.exec(C.KITE_CMD_DEALLOC_UCTX, destroy_payload(u2), uctx=u2)
    check_eq(st, C.KITE_STS_PERMISSION, "DEALLOC_UCTX by the context itself")
    d.exec_ok(C.KITE_CMD_DEALLOC_UCTX, destroy_payload(u2))
    st, _ = d.exec(C.KITE_CMD_DEALLOC_UCTX, destroy_payload(u2))
    check_eq(st, C.KITE_STS_BAD_HANDLE, "DEALLOC_UCTX twice")
    st, _ = d.exec(C.KITE_CMD_DEALLOC_UCTX, destroy_payload(0))
    check_eq(st, C.KITE_STS_BAD_HANDLE, "DEALLOC_UCTX 0")


@test("main")
def test_uctx_exhaustion(env):
    d = env.dev[0]
    d.bring_up(aq_log=8, acq_log=8)
    seen = set()
    for i in range(C.KITE_MAX_UCTX):
        d.submit(C.KITE_CMD_ALLOC_UCTX, ring=False)
    d.wr(C.KITE_REG_AQ_DB, d.aq_pi)
    for i in range(C.KITE_MAX_UCTX):
        _, st, _, out = d.wait_cqe()
        check_eq(st, C.KITE_STS_OK, "ALLOC_UCTX %d" % i)
        seen.add(out[0])
    check_eq(seen, set(range(1, C.KITE_MAX_UCTX + 1)), "uctx numbers")
    st, _ = d.exec(C.KITE_CMD_ALLOC_UCTX)
    check_eq(st, C.KITE_STS_NO_RESOURCES, "ALLOC_UCTX beyond max_uctx")


@test("small")
def test_pd_exhaustion(env):
    """PDs up to the limit (x-max-objects here), then NO_RESOURCES."""
    d = env.dev[0]
    depth_log = C.KITE_DEF_MAX_AQ_LOG_DEPTH
    d.bring_up(aq_log=depth_log, acq_log=depth_log)
    check_eq(d.rd(C.KITE_REG_CAP_MAX_PD), C.KITE_DEF_MAX_PD, "CAP_MAX_PD")
    max_pd = SMALL_MAX_OBJECTS
    handles = set()
    left = max_pd
    while left:
        n = min(left, 1 << depth_log)
        for i in range(n):
            d.submit(C.KITE_CMD_ALLOC_PD, ring=False)
        d.wr(C.KITE_REG_AQ_DB, d.aq_pi)
        for i in range(n):
            _, st, _, out = d.wait_cqe()
            check_eq(st, C.KITE_STS_OK, "ALLOC_PD %d" % len(handles))
            handles.add(out[0])
        left -= n
    check_eq(sorted(handles), list(range(1, max_pd + 1)),
             "PD handles, lowest first")
    st, _ = d.exec(C.KITE_CMD_ALLOC_PD)
    check_eq(st, C.KITE_STS_NO_RESOURCES, "ALLOC_PD beyond the limit")
    h = sorted(handles)[17]
    d.exec_ok(C.KITE_CMD_DEALLOC_PD, destroy_payload(h))
    check_eq(d.exec_ok(C.KITE_CMD_ALLOC_PD)[0], h, "freed PD reused")


@test("main")
def test_out_buffer_too_short(env):
    d = env.dev[0]
    d.bring_up()
    for op, size in ((C.KITE_CMD_QUERY_DEVICE, DEVICE_ATTR_SIZE),
                     (C.KITE_CMD_QUERY_STATS, STATS_SIZE)):
        st, _, raw = d.query(op, size, buflen=size - 1)
        check_eq(st, C.KITE_STS_BAD_PARAM, "opcode 0x%x short buffer" % op)
        check_eq(raw, b"\xee" * size, "buffer untouched")
    st, _, _ = d.query(C.KITE_CMD_QUERY_PORT, PORT_ATTR_SIZE,
                       buflen=PORT_ATTR_SIZE - 1, port=C.KITE_PORT_NUM)
    check_eq(st, C.KITE_STS_BAD_PARAM, "QUERY_PORT short buffer")
    # An unmapped out buffer is a DMA error, not a crash.
    payload = out_buf_payload(1 << 50, 4096)
    st, _ = d.exec(C.KITE_CMD_QUERY_DEVICE, payload)
    check_eq(st, C.KITE_STS_DMA_ERROR, "QUERY_DEVICE to unmapped memory")


@test("main")
def test_opcodes(env):
    d = env.dev[0]
    d.bring_up()
    for op in (0x00, 0x0a, 0x1d, 0x2f, 0x31, C.KITE_CMD_MAX, 0x40, 0xff):
        st, _ = d.exec(op)
        check_eq(st, C.KITE_STS_BAD_OPCODE, "opcode 0x%x" % op)
    # Every opcode of the ABI is implemented: an all-zero payload is
    # refused for its content, never as unsupported.
    for name in ("CREATE_CQ", "MODIFY_CQ", "QUERY_CQ", "DESTROY_CQ",
                 "CREATE_QP", "MODIFY_QP", "QUERY_QP", "DESTROY_QP",
                 "REG_MR", "DEREG_MR", "CREATE_SRQ", "MODIFY_SRQ",
                 "QUERY_SRQ", "DESTROY_SRQ"):
        st, _ = d.exec(K["KITE_CMD_" + name])
        check(st in (C.KITE_STS_BAD_PARAM, C.KITE_STS_BAD_HANDLE),
              "%s with a zero payload: status 0x%x" % (name, st))
    st, _ = d.exec(C.KITE_CMD_ALLOC_PD, flags=1)
    check_eq(st, C.KITE_STS_BAD_PARAM, "reserved header flags")
    check(d.status() & C.KITE_STATUS_READY, "device no longer READY")


@test("main")
def test_create_destroy_eq(env):
    d = env.dev[0]
    d.bring_up()
    ring = d.eq_rings
    eqns = []
    for i in range(C.KITE_DEF_MAX_EQ - 1):
        out = d.exec_ok(C.KITE_CMD_CREATE_EQ,
                        eq_payload(ring + i * 0x1000, 1, 12, 8,
                                   C.KITE_MSIX_COMP_BASE + i))
        eqns.append(out[0])
    check_eq(sorted(eqns), list(range(1, C.KITE_DEF_MAX_EQ)), "EQ numbers")
    st, _ = d.exec(C.KITE_CMD_CREATE_EQ,
                   eq_payload(ring, 1, 12, 8, C.KITE_MSIX_COMP_BASE))
    check_eq(st, C.KITE_STS_NO_RESOURCES, "EQ beyond max_eq")
    d.exec_ok(C.KITE_CMD_DESTROY_EQ, destroy_payload(eqns[0]))
    bad = [
        ("vector 0", eq_payload(ring, 1, 12, 8, 0), C.KITE_STS_BAD_PARAM),
        ("vector past table", eq_payload(ring, 1, 12, 8, C.KITE_MSIX_NUM),
         C.KITE_STS_BAD_PARAM),
        ("depth too big", eq_payload(ring, 1, 12, 17, 2),
         C.KITE_STS_BAD_PARAM),
        ("depth too small", eq_payload(ring, 1, 12, 1, 2),
         C.KITE_STS_BAD_PARAM),
        ("ring smaller than depth", eq_payload(ring, 1, 12, 9, 2),
         C.KITE_STS_BAD_PARAM),
        ("unaligned ring", eq_payload(ring + 8, 1, 12, 8, 2),
         C.KITE_STS_BAD_PARAM),
        ("page list", eq_payload(ring, 1, 12, 8, 2, level=1),
         C.KITE_STS_NOT_SUPPORTED),
    ]
    for name, payload, want in bad:
        st, _ = d.exec(C.KITE_CMD_CREATE_EQ, payload)
        check_eq(st, want, name)
    st, _ = d.exec(C.KITE_CMD_DESTROY_EQ, destroy_payload(eqns[0]))
    check_eq(st, C.KITE_STS_BAD_HANDLE, "DESTROY_EQ twice")
    st, _ = d.exec(C.KITE_CMD_DESTROY_EQ, destroy_payload(0))
    check_eq(st, C.KITE_STS_BAD_HANDLE, "DESTROY_EQ of the async EQ")
    u = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    st, _ = d.exec(C.KITE_CMD_CREATE_EQ, eq_payload(ring, 1, 12, 8, 2),
                   uctx=u)
    check_eq(st, C.KITE_STS_PERMISSION, "CREATE_EQ from a user context")
    st, _ = d.exec(C.KITE_CMD_DESTROY_EQ, destroy_payload(eqns[1]), uctx=u)
    check_eq(st, C.KITE_STS_PERMISSION, "DESTROY_EQ from a user context")
    # Arming an empty completion EQ raises nothing (no event pending); a
    # doorbell for a destroyed EQ or on a user page is ignored.
    vec = C.KITE_MSIX_COMP_BASE + 1
    d.take_irq(vec)
    d.eq_doorbell(eqns[1], 0, True)
    check(not d.take_irq(vec), "interrupt from an empty EQ")
    d.eq_doorbell(eqns[0], 0, True)
    d.q.writeq(d.db + u * C.KITE_DB_PAGE_SIZE + C.KITE_DB_EQ,
               (C.KITE_DB_EQ_ARM << C.KITE_DB_FLAGS_SHIFT) | eqns[1])
    check(d.status() & C.KITE_STATUS_READY, "not READY after EQ doorbells")
    log = env.q.guest_errors()
    check("doorbell for unknown EQ" in log, "destroyed EQ doorbell not logged")
    check("EQ doorbell on user page" in log,
          "user page EQ doorbell not logged")


@test("main")
def test_gids(env):
    d = env.dev[0]
    d.bring_up()
    v4 = bytes(10) + b"\xff\xff" + bytes([198, 18, 0, 1])
    v6 = bytes([0x20, 0x01, 0x0d, 0xb8]) + bytes(11) + b"\x01"
    d.exec_ok(C.KITE_CMD_ADD_GID, gid_payload(v4, 0))
    d.exec_ok(C.KITE_CMD_ADD_GID, gid_payload(v6, 1, 1))
    checks = [
        ("index in use", gid_payload(v4, 0), C.KITE_STS_BUSY),
        ("index beyond table", gid_payload(v4, C.KITE_DEF_MAX_GID),
         C.KITE_STS_BAD_PARAM),
        ("IPv4 GID not v4-mapped", gid_payload(v6, 2, 0),
         C.KITE_STS_BAD_PARAM),
        ("bad type", gid_payload(v6, 2, 7), C.KITE_STS_BAD_PARAM),
        ("bad port", gid_payload(v4, 2, 0, 2), C.KITE_STS_BAD_PARAM),
    ]
    for name, payload, want in checks:
        st, _ = d.exec(C.KITE_CMD_ADD_GID, payload)
        check_eq(st, want, name)
    check_eq(stats(d).num_gid, 2, "num_gid")
    d.exec_ok(C.KITE_CMD_DEL_GID, gid_payload(bytes(16), 0))
    st, _ = d.exec(C.KITE_CMD_DEL_GID, gid_payload(bytes(16), 0))
    check_eq(st, C.KITE_STS_BAD_HANDLE, "DEL_GID twice")
    st, _ = d.exec(C.KITE_CMD_DEL_GID, gid_payload(bytes(16), 99))
    check_eq(st, C.KITE_STS_BAD_PARAM, "DEL_GID index beyond table")
    d.exec_ok(C.KITE_CMD_ADD_GID, gid_payload(v4, 0))


@test("main")
def test_query_stats(env):
    d = env.dev[0]
    d.bring_up()
    u = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    d.exec_ok(C.KITE_CMD_ALLOC_PD)
    d.exec_ok(C.KITE_CMD_ALLOC_PD, uctx=u)
    d.exec_ok(C.KITE_CMD_CREATE_EQ,
              eq_payload(d.eq_rings, 1, 12, 8, C.KITE_MSIX_COMP_BASE))
    st, out, raw = d.query(C.KITE_CMD_QUERY_STATS, STATS_SIZE)
    check_eq(st, C.KITE_STS_OK, "status")
    check_eq(out[0], STATS_SIZE, "out[0]")
    n = hw.unpack("kite_stats", raw)
    check_eq(n.num_uctx, 1, "num_uctx")
    check_eq(n.num_pd, 2, "num_pd")
    check_eq(n.num_cq, 0, "num_cq")
    check_eq(n.num_qp, 0, "num_qp")
    check_eq(n.num_mr, 0, "num_mr")
    check_eq(n.num_eq, 2, "num_eq (async + 1)")
    check_eq(n.num_gid, 0, "num_gid")


@test("main")
def test_acq_phase_wrap(env):
    d = env.dev[0]
    d.bring_up(aq_log=2, acq_log=2)
    depth = 4
    for i in range(3 * depth + 1):
        cid = d.submit(C.KITE_CMD_ALLOC_PD)
        index = d.acq_ci
        want_phase = ((index >> 2) & 1) ^ 1
        got_id, st, _, out = d.wait_cqe()
        check_eq(got_id, cid, "cmd_id %d" % i)
        check_eq(st, C.KITE_STS_OK, "status %d" % i)
        check_eq(d.acq_entry(index).flags & C.KITE_ACQE_PHASE, want_phase,
                 "phase of completion %d" % i)
        # Batches that wrap the AQ ring work as well.
    for i in range(depth):
        d.submit(C.KITE_CMD_DEALLOC_PD, destroy_payload(i + 1), ring=False)
    d.wr(C.KITE_REG_AQ_DB, d.aq_pi)
    for i in range(depth):
        _, st, _, _ = d.wait_cqe()
        check_eq(st, C.KITE_STS_OK, "batched DEALLOC_PD %d" % i)


@test("main")
def test_create_eq_page_sizes(env):
    """CREATE_EQ accepts exactly the page sizes CAP_PAGE_SIZES advertises."""
    d = env.dev[0]
    d.bring_up()
    sizes = d.rd(C.KITE_REG_CAP_PAGE_SIZES) | \
        (d.rd(C.KITE_REG_CAP_PAGE_SIZES_HI) << 32)
    check_eq(sizes, C.KITE_DEF_PAGE_SIZES, "CAP_PAGE_SIZES")
    # d.ram is 16 MiB aligned: aligned to every page size up to 2 MiB.
    for shift in (0, 11, 13, 14, 15, 17, 20, 22, 29, 31, 32, 63, 64, 200,
                  255):
        st, _ = d.exec(C.KITE_CMD_CREATE_EQ,
                       eq_payload(d.ram, 1, shift, 8, C.KITE_MSIX_COMP_BASE))
        check_eq(st, C.KITE_STS_BAD_PARAM, "page_shift %d" % shift)
    for shift in (12, 16, 21):
        check(sizes & (1 << shift), "page size 2^%d not advertised" % shift)
        out = d.exec_ok(C.KITE_CMD_CREATE_EQ,
                        eq_payload(d.ram, 1, shift, 8, C.KITE_MSIX_COMP_BASE))
        d.exec_ok(C.KITE_CMD_DESTROY_EQ, destroy_payload(out[0]))


@test("main")
def test_dealloc_uctx_kernel_only(env):
    d = env.dev[0]
    d.bring_up()
    u1 = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    u2 = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    for actor, target in ((u1, u1), (u2, u1), (u1, 0), (u1, 77)):
        st, _ = d.exec(C.KITE_CMD_DEALLOC_UCTX, destroy_payload(target),
                       uctx=actor)
        check_eq(st, C.KITE_STS_PERMISSION,
                 "DEALLOC_UCTX %d by context %d" % (target, actor))
    check_eq(stats(d).num_uctx, 2, "num_uctx")
    d.exec_ok(C.KITE_CMD_DEALLOC_UCTX, destroy_payload(u1))
    d.exec_ok(C.KITE_CMD_DEALLOC_UCTX, destroy_payload(u2))
    check_eq(stats(d).num_uctx, 0, "num_uctx")
