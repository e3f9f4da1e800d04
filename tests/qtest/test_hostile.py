# SPDX-License-Identifier: GPL-2.0-or-later
"""A hostile guest: rings and MSI-X messages aimed at the device's own
BARs while the host changes the link (what a DMA of the device's own
cannot do to it), and page lists as long as the limits allow (the work
an admin command and an admin run may take), and frames from the wire
with an ICRC computed by the test."""

import functools
import struct
import types
import zlib

from device import DEVICE_ATTR_SIZE, MAC_A, MAC_B, SMALL_MAX_OBJECTS, \
    STATS_SIZE, destroy_payload, eq_payload, eth_post_rx, eth_rx_desc, \
    eth_send, eth_setup, mac_bytes, out_buf_payload, stats
from harness import check, check_eq, clock_stepper, test, wait_for
from hw import C
from rdma import PAGE, V4_DGID, V4_GID, Node, Rdma, batch, check_cqe, \
    cq_payload, pattern, pbl, reg_mr_payload

MSIX_CAP_ID = 0x11


def msix_entry(d, vector):
    """Guest address of MSI-X table entry VECTOR of device d."""
    cap = d.find_cap(MSIX_CAP_ID)
    check(cap is not None, "no MSI-X capability")
    return d.msix_bar + (d.cfg_read32(cap + 4) & ~7) + 16 * vector


def set_link(env, dev_id, up):
    env.q.qmp("set_link", name=dev_id, up=up)


@test("main")
def test_link_event_eq_on_own_bar(env):
    """The async EQ on BAR0 itself: the event that a host link change posts
    must not turn into register writes (slot 0 would write 0 to DEV_CTRL
    and reset the device). The event DMA is refused like any DMA of the
    device aimed at its own BARs, so the ring is unwritable: FATAL
    EQ_DMA, as for an unwritable EQ ring, and no reset."""
    d = env.dev[0]
    d.bring_up(aeq=d.regs)
    try:
        set_link(env, "k0", False)
        wait_for(lambda: not d.status() & C.KITE_STATUS_LINK_UP,
                 "LINK_UP to clear")
        check_eq(d.rd(C.KITE_REG_DEV_CTRL), C.KITE_CTRL_ENABLE,
                 "DEV_CTRL after the link event (0: the event reset it)")
        st = d.status()
        check(st & C.KITE_STATUS_FATAL, "not FATAL (status 0x%x)" % st)
        check_eq(d.rd(C.KITE_REG_FATAL_CODE), C.KITE_FATAL_EQ_DMA,
                 "fatal code")
    finally:
        set_link(env, "k0", True)
    # A reset brings it back.
    d.bring_up()


@test("main")
def test_link_event_msix_on_own_bar(env):
    """The admin vector's MSI-X message aimed at DEV_CTRL with data 0: the
    interrupt of a link event must not reset the device. The device stays
    READY and the event is in the async EQ."""
    d = env.dev[0]
    d.bring_up()
    entry = msix_entry(d, C.KITE_MSIX_ADMIN)
    saved = [d.q.readl(entry + 4 * i) for i in range(3)]
    d.eq_doorbell(0, 0, True)
    try:
        d.q.writel(entry, d.regs + C.KITE_REG_DEV_CTRL)
        d.q.writel(entry + 4, 0)
        d.q.writel(entry + 8, 0)
        set_link(env, "k0", False)
        wait_for(lambda: not d.status() & C.KITE_STATUS_LINK_UP,
                 "LINK_UP to clear")
        wait_for(lambda: d.eqe(0)[3] & C.KITE_EQE_PHASE, "async EQE 0")
        check_eq(d.eqe(0)[2], C.KITE_EVT_PORT_ERR, "event type")
        check_eq(d.rd(C.KITE_REG_DEV_CTRL), C.KITE_CTRL_ENABLE,
                 "DEV_CTRL after the interrupt (0: it reset the device)")
        st = d.status()
        check(st & C.KITE_STATUS_READY and not st & C.KITE_STATUS_FATAL,
              "not READY after the interrupt (status 0x%x)" % st)
    finally:
        for i, v in enumerate(saved):
            d.q.writel(entry + 4 * i, v)
        set_link(env, "k0", True)
    # The admin queue still answers.
    check_eq(stats(d)["eq_events_dropped"], 0, "eq_events_dropped")


# ---- page lists: bounded work per command and per admin run ------------

CHUNK_ENTRIES = C.KITE_PBL_ENTRIES_PER_CHUNK
MAX_MR_PAGES = C.KITE_DEF_MAX_MR_SIZE // PAGE


def admin_work(d):
    """x-admin-work: page-list entries read, runs that yielded."""
    w = d.q.qmp("qom-get", path="/machine/peripheral/k0",
                property="x-admin-work")
    return w["pbl-entries"], w["yields"]


def one_page_level2(r, npages):
    """A level-2 list of npages pages whose chunks all name one chunk of
    CHUNK_ENTRIES entries, all naming one page: what a guest needs for a
    list of any length is one chunk array and one page."""
    chunk = r.lists
    array = r.lists + C.KITE_PBL_CHUNK_SIZE
    r.level1(chunk, [r.pages] * CHUNK_ENTRIES)
    nchunks = -(-npages // CHUNK_ENTRIES)
    r.level1(array, [chunk] * nchunks)
    return pbl(array, npages, 12, 2), nchunks


def refused_unread(d, payload, status, what):
    """REG_MR payload answers status, and reads no page-list entry for it
    (the status is checked first: it is what a guest sees)."""
    st, _ = d.exec(C.KITE_CMD_REG_MR, payload)
    check_eq(st, status, what)
    before = admin_work(d)[0]
    st, _ = d.exec(C.KITE_CMD_REG_MR, payload)
    check_eq(st, status, what)
    check_eq(admin_work(d)[0] - before, 0, "entries read for " + what)


@test("main")
def test_reg_mr_page_list_limit(env):
    """The largest MR (CAP_MAX_MR_SIZE) bounds the list one REG_MR reads:
    at the limit every entry is read once; one page more is refused
    before any entry is read."""
    d = env.dev[0]
    r = Rdma(d, eq=False, gids=False)
    size = C.KITE_DEF_MAX_MR_SIZE
    pd = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    desc, nchunks = one_page_level2(r, MAX_MR_PAGES + 1)
    refused_unread(d, reg_mr_payload(pd, 0, 0, size + PAGE, desc, 0),
                   C.KITE_STS_BAD_PARAM, "REG_MR one page past the limit")
    before = admin_work(d)[0]
    desc, nchunks = one_page_level2(r, MAX_MR_PAGES)
    key = d.exec_ok(C.KITE_CMD_REG_MR, reg_mr_payload(
        pd, 0, 0, size, desc, 0))[0]
    check_eq(admin_work(d)[0] - before, MAX_MR_PAGES + nchunks,
             "entries read for an MR at the limit")
    d.exec_ok(C.KITE_CMD_DEREG_MR, destroy_payload(key))
    check_eq((d.rd(C.KITE_REG_CAP_MAX_MR_SIZE_HI) << 32) |
             d.rd(C.KITE_REG_CAP_MAX_MR_SIZE_LO), size, "CAP_MAX_MR_SIZE")


@test("small")
def test_reg_mr_full_table_before_list(env):
    """A full MR table answers NO_RESOURCES before the page list is read:
    a guest cannot make the device walk lists it will refuse anyway."""
    d = env.dev[0]
    r = Rdma(d, eq=False, gids=False)
    pd = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    keys = batch(d, [(C.KITE_CMD_REG_MR, reg_mr_payload(
        pd, 0, 0, PAGE, pbl(r.pages, 1), 0), 0)] * SMALL_MAX_OBJECTS)
    check(all(st == C.KITE_STS_OK for st, _ in keys), "REG_MR failed")
    # The last entry is bad: the walk would end in BAD_PARAM.
    lst = r.level1(r.lists, [r.pages] * 63 + [0])
    refused_unread(d, reg_mr_payload(pd, 0, 0, 64 * PAGE,
                                     pbl(lst, 64, 12, 1), 0),
                   C.KITE_STS_NO_RESOURCES, "REG_MR into a full table")
    res = batch(d, [(C.KITE_CMD_DEREG_MR, destroy_payload(out[0]), 0)
                    for _, out in keys])
    check(all(st == C.KITE_STS_OK for st, _ in res), "DEREG_MR failed")


@test("main")
def test_admin_run_bounded(env):
    """One run of the admin bottom half executes at most
    KITE_AQ_RUN_MAX_CMDS commands and starts none once its commands have
    read KITE_AQ_RUN_MAX_PBL_ENTRIES page-list entries; it yields to the
    main loop and the rest of the doorbell's commands follow."""
    d = env.dev[0]
    r = Rdma(d, eq=False, gids=False, aq_log=7)
    # Cheap commands: one yield for KITE_AQ_RUN_MAX_CMDS + 6 of them.
    n = C.KITE_AQ_RUN_MAX_CMDS + 6
    yields = admin_work(d)[1]
    res = batch(d, [(C.KITE_CMD_ALLOC_PD, b"", 0)] * n)
    check(all(st == C.KITE_STS_OK for st, _ in res), "ALLOC_PD failed")
    check_eq(admin_work(d)[1] - yields, 1, "yields for %d commands" % n)
    pd = res[0][1][0]
    # Page lists: 2^22 pages each, so the fourth reaches the run's budget.
    npages = 1 << 22
    count = 8
    desc, nchunks = one_page_level2(r, npages)
    per_cmd = npages + nchunks
    check(3 * per_cmd < C.KITE_AQ_RUN_MAX_PBL_ENTRIES <= 4 * per_cmd,
          "the budget lies between three and four lists")
    entries, yields = admin_work(d)
    res = batch(d, [(C.KITE_CMD_REG_MR, reg_mr_payload(
        pd, 0, 0, npages * PAGE, desc, 0), 0)] * count)
    check(all(st == C.KITE_STS_OK for st, _ in res), "REG_MR failed")
    got_entries, got_yields = admin_work(d)
    check_eq(got_entries - entries, count * per_cmd, "entries read")
    check_eq(got_yields - yields, 1, "yields for %d lists" % count)
    res = batch(d, [(C.KITE_CMD_DEREG_MR, destroy_payload(out[0]), 0)
                    for _, out in res])
    check(all(st == C.KITE_STS_OK for st, _ in res), "DEREG_MR failed")


# ---- rings, out buffers and MSI-X aimed at the device's own BARs -------

def own_bars(d):
    """(name, base) of the device's BARs: registers, doorbells, MSI-X."""
    return (("BAR0", d.regs), ("BAR2", d.db), ("BAR4", d.msix_bar))


def check_not_reset(d, what):
    check_eq(d.rd(C.KITE_REG_DEV_CTRL), C.KITE_CTRL_ENABLE,
             "DEV_CTRL after " + what)


def check_msix_table(d, what):
    """Every vector's entry still sends to the scratch words, unmasked."""
    for v in range(C.KITE_MSIX_NUM):
        e = msix_entry(d, v)
        check_eq((d.q.readl(e), d.q.readl(e + 8), d.q.readl(e + 12)),
                 (d.scratch + 4 * v, 0x4b000000 | v, 0),
                 "MSI-X entry %d after %s" % (v, what))


@test("main")
def test_admin_rings_on_own_bars(env):
    """An AQ or ACQ on one of the device's BARs: the admin bottom half's
    DMA there fails (FATAL AQ_DMA), nothing is written to the BAR."""
    d = env.dev[0]
    for name, base in own_bars(d):
        for ring in ("aq", "acq"):
            what = "%s on %s" % (ring.upper(), name)
            d.bring_up(**{ring: base})
            d.submit(C.KITE_CMD_QUERY_DEVICE)
            wait_for(lambda: d.status() & C.KITE_STATUS_FATAL,
                     "FATAL with the " + what)
            check_eq(d.rd(C.KITE_REG_FATAL_CODE), C.KITE_FATAL_AQ_DMA,
                     "fatal code with the " + what)
            check_not_reset(d, "the " + what)
            check_msix_table(d, "the " + what)
    d.bring_up()


@test("main")
def test_out_buffer_on_own_bars(env):
    """A QUERY out buffer on one of the device's BARs: DMA_ERROR, and the
    device and its MSI-X table are as they were."""
    d = env.dev[0]
    d.bring_up()
    for name, base in own_bars(d):
        for op, size in ((C.KITE_CMD_QUERY_DEVICE, DEVICE_ATTR_SIZE),
                         (C.KITE_CMD_QUERY_STATS, STATS_SIZE)):
            st, _ = d.exec(op, out_buf_payload(base, size))
            check_eq(st, C.KITE_STS_DMA_ERROR,
                     "opcode 0x%x out buffer on %s" % (op, name))
            check_not_reset(d, "an out buffer on " + name)
            check(d.status() & C.KITE_STATUS_READY, "READY")
    check_msix_table(d, "out buffers on the BARs")


@test("main")
def test_admin_msix_on_own_bar(env):
    """The admin vector aimed at DEV_CTRL (data 0): admin completions do
    not reset the device, commands go on."""
    d = env.dev[0]
    d.bring_up()
    entry = msix_entry(d, C.KITE_MSIX_ADMIN)
    saved = [d.q.readl(entry + 4 * i) for i in range(3)]
    try:
        d.q.writel(entry, d.regs + C.KITE_REG_DEV_CTRL)
        d.q.writel(entry + 4, 0)
        d.q.writel(entry + 8, 0)
        for _ in range(3):
            pd = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
            d.exec_ok(C.KITE_CMD_DEALLOC_PD, destroy_payload(pd))
        check_not_reset(d, "admin interrupts aimed at DEV_CTRL")
    finally:
        for i, v in enumerate(saved):
            d.q.writel(entry + 4 * i, v)
    check(d.status() & C.KITE_STATUS_READY, "READY")


# ---- frames from the wire with a valid ICRC ----------------------------

ROCE_UDP_PORT = 4791
BTH_ACKREQ = 0x80
OP_RC_SEND_ONLY = 0x04
OP_RC_ACK = 0x11
AETH_SYNDROME_TYPE = 0x60       # syndrome bits 6:5: 0 for an ACK


def ipv4_csum(hdr):
    s = sum(struct.unpack("!10H", hdr))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def icrc(ip):
    """RoCEv2 ICRC of an IPv4 packet (without the ICRC): CRC-32 over 8
    bytes of ones and the packet with the variant fields (TOS, TTL,
    header checksum, UDP checksum, BTH byte 4) set to ones."""
    b = bytearray(ip)
    for i in (1, 8, 10, 11, 20 + 6, 20 + 7, 20 + 8 + 4):
        b[i] = 0xff
    return zlib.crc32(b"\xff" * 8 + bytes(b))


def rc_send_only_v4(dst_mac, src_mac, src_ip, dst_ip, dqpn, psn, payload,
                    good_icrc=True, opcode=OP_RC_SEND_ONLY):
    """An RC SEND ONLY frame (or another opcode without extra headers)
    with AckReq, its ICRC computed here (not by the engine) or, with
    good_icrc False, one bit off."""
    bth = struct.pack("!BBHII", opcode, 0, 0xffff, dqpn,
                      (BTH_ACKREQ << 24) | psn)
    udp_len = 8 + len(bth) + len(payload) + 4
    udp = struct.pack("!HHHH", 0xc000, ROCE_UDP_PORT, udp_len, 0)
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, 0, 0x4000, 64,
                      17, 0, src_ip, dst_ip)
    hdr = hdr[:10] + struct.pack("!H", ipv4_csum(hdr)) + hdr[12:]
    ip = hdr + udp + bth + payload
    crc = icrc(ip) ^ (0 if good_icrc else 1)
    return dst_mac + src_mac + b"\x08\x00" + ip + struct.pack("<I", crc)


@test("main")
def test_injected_frame_valid_icrc(env):
    """A frame built here, not by the engine, with a valid ICRC reaches a
    QP from the wire (k1's Ethernet ring, through the hub): the receive
    completes with its payload and the responder ACKs. The same frame one
    ICRC bit off is counted in roce_icrc_errors and consumes nothing."""
    da, db = env.dev[0], env.dev[1]
    n = Node(da, MAC_A)
    db.bring_up()
    eth_setup(db)
    cq = n.cq()
    qp = n.qp(cq, cq)
    peer_qpn, psn = 0x77, 0x300
    qp.connect(peer_qpn, V4_DGID, mac_bytes(MAC_B), sq_psn=0x100,
               rq_psn=psn)
    qp.post_recv(n.va(0x100), 256, n.key)
    payload = pattern(64, 5)
    mac_a, mac_b = mac_bytes(MAC_A), mac_bytes(MAC_B)
    frame = functools.partial(rc_send_only_v4, mac_a, mac_b, V4_DGID[12:],
                              V4_GID[12:], qp.qpn, psn, payload)
    s0 = stats(da)
    check_eq(eth_send(db, frame(good_icrc=False)) & C.KITE_ETH_DESC_ERR, 0,
             "sent")
    wait_for(lambda: stats(da)["roce_icrc_errors"] ==
             s0["roce_icrc_errors"] + 1, "the bad ICRC counted")
    check(cq.empty(), "a CQE for a frame with a bad ICRC")
    rx_buf = eth_post_rx(db)
    check_eq(eth_send(db, frame()) & C.KITE_ETH_DESC_ERR, 0, "sent")
    cqe = cq.poll("the SEND with a valid ICRC")
    check_cqe(cqe, qp.qpn, 0, C.KITE_CQE_RECV, len(payload))
    check_eq(n.read(0x100, len(payload)), payload, "received bytes")
    # The ACK reaches k1's Ethernet ring (k1 has no GID for it).
    wait_for(lambda: db.rd(C.KITE_REG_ETH_RX_CI) == 1, "the ACK")
    _, length, status = eth_rx_desc(db, 0)
    check_eq(status & C.KITE_ETH_DESC_ERR, 0, "ACK RX status")
    ack = db.q.read(rx_buf, length)
    bth = ack[14 + 20 + 8:14 + 20 + 8 + 12]
    check_eq(bth[0], OP_RC_ACK, "ACK opcode")
    check_eq(struct.unpack("!I", bth[4:8])[0] & 0xffffff, peer_qpn,
             "ACK destination QP")
    check_eq(struct.unpack("!I", bth[8:12])[0] & 0xffffff, psn, "ACK PSN")
    check_eq(ack[14 + 20 + 8 + 12] & AETH_SYNDROME_TYPE, 0, "AETH: an ACK")
    s1 = stats(da)
    check_eq(s1["roce_icrc_errors"], s0["roce_icrc_errors"] + 1,
             "roce_icrc_errors")
    check_eq(s1["roce_rx_dropped"], s0["roce_rx_dropped"], "roce_rx_dropped")
    check_eq(n.r.query_qp(qp.qpn).state, C.KITE_QPS_RTS, "QP state")


@test("main")
def test_timer_cqe_on_own_bar(env):
    """A send CQ whose ring is the MSI-X table (BAR4), and a peer that
    never answers: the retry-exceeded CQE comes from the QP's timer, not
    from a guest access, and must not land in the table: the write is
    refused, so the CQ goes into error (CQ_ERR), as for a ring that is
    not writable, rather than the CQE being lost without a word."""
    d = env.dev[0]
    n = Node(d, MAC_A)
    scq = types.SimpleNamespace(cqn=d.exec_ok(
        C.KITE_CMD_CREATE_CQ, cq_payload(pbl(d.msix_bar, 1), 4,
                                         n.r.eqn))[0])
    rcq = n.cq()
    qp = n.qp(scq, rcq)
    # Nobody has this MAC: the SEND is never answered.
    qp.connect(0x77, V4_DGID, b"\x52\x54\x00\x00\x00\x09", sq_psn=0x100,
               rq_psn=0x300)
    qp.post_send(C.KITE_WQE_SEND, [(n.va(0), 16, n.key)])
    step = clock_stepper(d.q, 100000000)

    def exhausted():
        step()
        return n.r.query_qp(qp.qpn)["state"] == C.KITE_QPS_ERR

    wait_for(exhausted, "retries exhausted")
    wait_for(lambda: (C.KITE_EVT_CQ_ERR, scq.cqn) in
             [(e[2], e[0]) for e in map(d.eqe, range(1 << d.aeq_log))],
             "CQ_ERR for the CQ on the MSI-X table")
    check(d.status() & C.KITE_STATUS_READY, "READY")
    check_not_reset(d, "the timer's CQE")
    check_msix_table(d, "a CQE aimed at the MSI-X table")


def comp_event_into(d, eq_addr, what):
    """A completion EQ at eq_addr and an armed CQ on it; a SEND's
    completion event cannot be written there: FATAL EQ_DMA."""
    n = Node(d, MAC_A)
    eqn = d.exec_ok(C.KITE_CMD_CREATE_EQ, eq_payload(
        eq_addr, 1, 12, 4, C.KITE_MSIX_COMP_BASE + 1))[0]
    a_cq, b_cq = n.cq(), n.cq(eqn=eqn)
    a, b = n.qp(a_cq, a_cq), n.qp(b_cq, b_cq)
    a.connect(b.qpn, V4_GID, n.mac, sq_psn=0x100, rq_psn=0x200)
    b.connect(a.qpn, V4_GID, n.mac, sq_psn=0x200, rq_psn=0x100)
    b.post_recv(n.va(0x1000), 64, n.key)
    b_cq.doorbell(C.KITE_DB_CQ_ARM_NEXT)
    a.post_send(C.KITE_WQE_SEND, [(n.va(0), 16, n.key)])
    wait_for(lambda: d.status() & C.KITE_STATUS_FATAL, "FATAL for " + what)
    check_eq(d.rd(C.KITE_REG_FATAL_CODE), C.KITE_FATAL_EQ_DMA, "fatal code")


@test("main")
def test_comp_eq_on_own_bar(env):
    """A completion EQ on BAR0 and an armed CQ on it: the completion event
    of a SEND (posted from the guest's doorbell access) is refused like
    the host's link event is, FATAL EQ_DMA, and no register is written."""
    d = env.dev[0]
    comp_event_into(d, d.regs, "the event ring on BAR0")
    check_not_reset(d, "a completion event aimed at BAR0")
    check_msix_table(d, "a completion event aimed at BAR0")
    d.bring_up()
