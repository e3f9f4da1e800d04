# SPDX-License-Identifier: GPL-2.0-or-later
"""Fatal errors, DMA errors, addresses that wrap, garbage commands and the
fault-injection properties."""

import random
import subprocess
import time

import hw
from device import DEVICE_ATTR_SIZE, EQE_SIZE, PORT_ATTR_SIZE, STATS_SIZE, \
    db_value, destroy_payload, eq_payload, hmp, out_buf_payload, stats
from harness import CMD_TIMEOUT, TestFailure, check, check_eq, test, \
    wait_for
from hw import C, K

KNOWN_STATUS = set(v for k, v in K.items() if k.startswith("KITE_STS_"))
TOP_PAGE = (1 << 64) - C.KITE_RING_ALIGN      # last aligned page of 2^64


def payload_fields(types, name):
    """(offset, size) in the admin payload of field NAME of each struct of
    TYPES (by name) that an admin command holds, over every command."""
    payload = hw.offsetof("kite_aq_cmd", "raw")
    found = set()
    for cmd in hw.field_names("kite_aq_cmd"):
        f = hw.field("kite_aq_cmd", cmd)
        if f.offset < payload or f.type["kind"] != "struct":
            continue                    # the header; the raw bytes
        for member in hw.field_names(f.type["name"]):
            g = hw.field(f.type["name"], member)
            if g.type["kind"] == "struct" and g.type["name"] in types:
                h = hw.field(g.type["name"], name)
                found.add((f.offset - payload + g.offset + h.offset, h.size))
    return sorted(found)


# DMA addresses (out buffers, rings, page lists) and out buffer lengths.
DMA_ADDRS = payload_fields(("kite_aq_out_buf", "kite_pbl_desc"), "addr")
OUT_LENS = payload_fields(("kite_aq_out_buf",), "len")


def put_int(buf, off, size, value):
    buf[off:off + size] = value.to_bytes(size, "little")


def eth_tx_from(d, ring):
    """Enables Ethernet TX on a 4-entry ring at RING and rings once."""
    d.wr(C.KITE_REG_ETH_TX_BASE_LO, ring & 0xffffffff)
    d.wr(C.KITE_REG_ETH_TX_BASE_HI, ring >> 32)
    d.wr(C.KITE_REG_ETH_TX_LOG_DEPTH, 2)
    d.wr(C.KITE_REG_ETH_CTRL, C.KITE_ETH_CTRL_TX_EN)
    check_eq(d.rd(C.KITE_REG_ETH_CTRL), C.KITE_ETH_CTRL_TX_EN, "TX_EN")
    d.wr(C.KITE_REG_ETH_TX_DB, 1)


def random_doorbell(rnd):
    """A doorbell value with random fields, object numbers 0..11."""
    index = rnd.getrandbits(32)
    num = rnd.randrange(12)
    return db_value(num, rnd.getrandbits(8), index)


@test("main")
def test_x_fatal(env):
    """qom-set x-fatal: a running device fails with that code, as it does
    on an internal error; refused before enable and for code 0."""
    d = env.dev[2]                      # no netdev: no link events
    path = "/machine/peripheral/k2"
    code = C.KITE_FATAL_INTERNAL
    d.reset()
    out = hmp(env, "qom-set %s x-fatal %d" % (path, code))
    check("not running" in out, "x-fatal accepted before enable: %r" % out)
    check(not d.status() & C.KITE_STATUS_FATAL, "FATAL before enable")
    d.bring_up()
    out = hmp(env, "qom-set %s x-fatal 0" % path)
    check("not a fatal" in out, "x-fatal 0 accepted: %r" % out)
    check_eq(d.status() & C.KITE_STATUS_FATAL, 0, "FATAL after code 0")
    d.take_irq(C.KITE_MSIX_ADMIN)
    check_eq(hmp(env, "qom-set %s x-fatal %d" % (path, code)).strip(), "",
             "qom-set x-fatal")
    check(d.status() & C.KITE_STATUS_FATAL, "no FATAL after x-fatal")
    check(not d.status() & C.KITE_STATUS_READY, "READY with FATAL")
    check_eq(d.rd(C.KITE_REG_FATAL_CODE), code, "FATAL_CODE")
    check_eq(env.q.qmp("qom-get", path=path, property="x-fatal"), code,
             "qom-get x-fatal")
    data, _, typ, flags = d.eqe(0)
    check_eq(typ, C.KITE_EVT_DEV_FATAL, "async event type")
    check_eq(data, code, "async event data")
    check_eq(flags & C.KITE_EQE_PHASE, 1, "async event phase")
    check(d.take_irq(C.KITE_MSIX_ADMIN), "no admin interrupt on x-fatal")
    # The driver's reset clears it; the device comes back.
    d.bring_up()
    check_eq(env.q.qmp("qom-get", path=path, property="x-fatal"),
             C.KITE_FATAL_NONE, "x-fatal after reset")
    d.exec_ok(C.KITE_CMD_ALLOC_PD)


@test("main")
def test_aq_doorbell_beyond_depth(env):
    d = env.dev[0]
    d.bring_up(aq_log=2, acq_log=2)
    d.exec_ok(C.KITE_CMD_ALLOC_PD)
    d.take_irq(C.KITE_MSIX_ADMIN)
    d.wr(C.KITE_REG_AQ_DB, d.aq_pi + 5)
    wait_for(lambda: d.status() & C.KITE_STATUS_FATAL, "FATAL")
    check(not d.status() & C.KITE_STATUS_READY, "READY with FATAL")
    check_eq(d.rd(C.KITE_REG_FATAL_CODE), C.KITE_FATAL_AQ_DOORBELL,
             "FATAL_CODE")
    data, _, typ, flags = d.eqe(0)
    check_eq(typ, C.KITE_EVT_DEV_FATAL, "async event type")
    check_eq(data, C.KITE_FATAL_AQ_DOORBELL, "async event data")
    check_eq(flags & C.KITE_EQE_PHASE, 1, "async event phase")
    check(d.take_irq(C.KITE_MSIX_ADMIN), "no admin interrupt on FATAL")
    # Nothing executes any more.
    d.submit(C.KITE_CMD_ALLOC_PD)
    time.sleep(0.05)
    check_eq(d.acq_entry(d.acq_ci).flags & C.KITE_ACQE_PHASE, 0,
             "completion written after FATAL")
    # A doorbell behind the consumer is just as fatal.
    d.bring_up(aq_log=2, acq_log=2)
    d.exec_ok(C.KITE_CMD_ALLOC_PD)
    d.wr(C.KITE_REG_AQ_DB, 0)
    wait_for(lambda: d.status() & C.KITE_STATUS_FATAL, "FATAL (pi < ci)")


@test("main")
def test_aq_dma_error(env):
    d = env.dev[0]
    far = 1 << 44           # nothing is mapped there
    d.bring_up(aq=far)
    d.submit(C.KITE_CMD_QUERY_DEVICE, ring=False)   # goes to RAM at d.aq
    d.wr(C.KITE_REG_AQ_DB, 1)
    wait_for(lambda: d.status() & C.KITE_STATUS_FATAL, "FATAL")
    check_eq(d.rd(C.KITE_REG_FATAL_CODE), C.KITE_FATAL_AQ_DMA, "FATAL_CODE")
    d.reset()


@test("main")
def test_ring_dma_errors(env):
    d = env.dev[0]
    far = 1 << 44           # nothing is mapped there
    # Completion ring not writable.
    d.bring_up(acq=far)
    d.submit(C.KITE_CMD_QUERY_DEVICE)
    wait_for(lambda: d.status() & C.KITE_STATUS_FATAL, "FATAL (ACQ)")
    check_eq(d.rd(C.KITE_REG_FATAL_CODE), C.KITE_FATAL_AQ_DMA, "ACQ code")
    # Async EQ not writable: the first event is fatal.
    d.bring_up(aeq=far)
    try:
        env.q.qmp("set_link", name="k0", up=False)
        wait_for(lambda: d.status() & C.KITE_STATUS_FATAL, "FATAL (AEQ)")
        check_eq(d.rd(C.KITE_REG_FATAL_CODE), C.KITE_FATAL_EQ_DMA, "AEQ code")
    finally:
        env.q.qmp("set_link", name="k0", up=True)
    # Ethernet TX ring not readable.
    d.bring_up()
    eth_tx_from(d, far)
    wait_for(lambda: d.status() & C.KITE_STATUS_FATAL, "FATAL (ETH)")
    check_eq(d.rd(C.KITE_REG_FATAL_CODE), C.KITE_FATAL_ETH_DMA, "ETH code")
    d.bring_up()


@test("main")
def test_fatal_event_needs_a_working_async_eq(env):
    """DEV_FATAL goes to EQ 0 whenever EQ 0 is set up and did not fail."""
    d = env.dev[0]
    far = 1 << 44           # nothing is mapped there
    # BAD_CONFIG: EQ 0 was never set up, so nothing is written to the AEQ
    # registers' ring even though it is valid memory.
    d.enable(aq_log=1, acq_log=1)
    check_eq(d.rd(C.KITE_REG_FATAL_CODE), C.KITE_FATAL_BAD_CONFIG, "code")
    check_eq(d.q.read(d.aeq, EQE_SIZE << d.aeq_log),
             bytes(EQE_SIZE << d.aeq_log), "AEQ ring after BAD_CONFIG")
    # EQ 0 itself not writable: FATAL_EQ_DMA, vector 0 fires, no loop.
    d.bring_up(aeq=far)
    d.take_irq(C.KITE_MSIX_ADMIN)
    try:
        env.q.qmp("set_link", name="k0", up=False)
        wait_for(lambda: d.status() & C.KITE_STATUS_FATAL, "FATAL (AEQ)")
        check_eq(d.rd(C.KITE_REG_FATAL_CODE), C.KITE_FATAL_EQ_DMA, "AEQ code")
        check(d.take_irq(C.KITE_MSIX_ADMIN), "no admin interrupt")
    finally:
        env.q.qmp("set_link", name="k0", up=True)
    # Any other fatal error with a working EQ 0: the event is posted.
    d.bring_up()
    eth_tx_from(d, far)
    wait_for(lambda: d.status() & C.KITE_STATUS_FATAL, "FATAL (ETH)")
    data, _, typ, flags = d.eqe(0)
    check_eq(typ, C.KITE_EVT_DEV_FATAL, "event type")
    check_eq(data, C.KITE_FATAL_ETH_DMA, "event data")
    check_eq(flags & C.KITE_EQE_PHASE, 1, "event phase")
    d.bring_up()


@test("main")
def test_ring_address_wrap(env):
    """Rings and buffers that would wrap past 2^64 are rejected."""
    d = env.dev[0]
    # Admin rings: a ring that fits the last page is accepted; one page
    # more wraps (BAD_CONFIG).
    cases = [
        ("AQ", dict(aq=TOP_PAGE, aq_log=6, acq_log=6)),    # 8 KiB
        ("ACQ", dict(acq=TOP_PAGE, aq_log=3, acq_log=8)),  # 8 KiB
        ("AEQ", dict(aeq=TOP_PAGE, aeq_log=9)),             # 8 KiB
    ]
    for name, kw in cases:
        st = d.enable(**kw)
        check(st & C.KITE_STATUS_FATAL, name + " wrapping: no FATAL")
        check_eq(d.rd(C.KITE_REG_FATAL_CODE), C.KITE_FATAL_BAD_CONFIG,
                 name + " wrapping: FATAL_CODE")
    for name, kw in (("AQ", dict(aq=TOP_PAGE, aq_log=5, acq_log=5)),
                     ("ACQ", dict(acq=TOP_PAGE, aq_log=3, acq_log=7)),
                     ("AEQ", dict(aeq=TOP_PAGE, aeq_log=8))):
        st = d.enable(**kw)
        check_eq(st & (C.KITE_STATUS_READY | C.KITE_STATUS_FATAL),
                 C.KITE_STATUS_READY, name + " in the last page")
    d.bring_up()
    # CREATE_EQ: two 4 KiB pages from the last page wrap.
    st, _ = d.exec(C.KITE_CMD_CREATE_EQ,
                   eq_payload(TOP_PAGE, 2, 12, 9, C.KITE_MSIX_COMP_BASE))
    check_eq(st, C.KITE_STS_BAD_PARAM, "CREATE_EQ wrapping ring")
    out = d.exec_ok(C.KITE_CMD_CREATE_EQ,
                    eq_payload(TOP_PAGE, 1, 12, 8, C.KITE_MSIX_COMP_BASE))
    d.exec_ok(C.KITE_CMD_DESTROY_EQ, destroy_payload(out[0]))
    # Ethernet rings: 512 descriptors (8 KiB) wrap, 256 fit.
    d.wr(C.KITE_REG_ETH_TX_BASE_LO, TOP_PAGE & 0xffffffff)
    d.wr(C.KITE_REG_ETH_TX_BASE_HI, TOP_PAGE >> 32)
    d.wr(C.KITE_REG_ETH_RX_BASE_LO, TOP_PAGE & 0xffffffff)
    d.wr(C.KITE_REG_ETH_RX_BASE_HI, TOP_PAGE >> 32)
    d.wr(C.KITE_REG_ETH_TX_LOG_DEPTH, 9)
    d.wr(C.KITE_REG_ETH_RX_LOG_DEPTH, 9)
    d.wr(C.KITE_REG_ETH_CTRL, C.KITE_ETH_CTRL_TX_EN | C.KITE_ETH_CTRL_RX_EN)
    check_eq(d.rd(C.KITE_REG_ETH_CTRL), 0, "ETH_CTRL with wrapping rings")
    d.wr(C.KITE_REG_ETH_TX_LOG_DEPTH, 8)
    d.wr(C.KITE_REG_ETH_RX_LOG_DEPTH, 8)
    d.wr(C.KITE_REG_ETH_CTRL, C.KITE_ETH_CTRL_TX_EN | C.KITE_ETH_CTRL_RX_EN)
    check_eq(d.rd(C.KITE_REG_ETH_CTRL),
             C.KITE_ETH_CTRL_TX_EN | C.KITE_ETH_CTRL_RX_EN,
             "ETH_CTRL with rings in the last page")
    d.wr(C.KITE_REG_ETH_CTRL, 0)
    # Out buffers: the device attributes half their size below 2^64 wrap
    # (BAD_PARAM); ending exactly at 2^64 they are only unmapped
    # (DMA_ERROR).
    top = 1 << 64
    st, _ = d.exec(C.KITE_CMD_QUERY_DEVICE,
                   out_buf_payload(top - DEVICE_ATTR_SIZE // 2, 4096))
    check_eq(st, C.KITE_STS_BAD_PARAM, "out buffer wrapping")
    st, _ = d.exec(C.KITE_CMD_QUERY_DEVICE,
                   out_buf_payload(top - DEVICE_ATTR_SIZE, 4096))
    check_eq(st, C.KITE_STS_DMA_ERROR, "out buffer ending at 2^64")
    check(d.status() & C.KITE_STATUS_READY, "not READY")


@test("main")
def test_random_commands(env):
    """Garbage in every field: answers with a known status, never a crash."""
    rnd = random.Random(0x4b495445)
    d = env.dev[0]
    d.bring_up(aq_log=6, acq_log=6)
    far = 1 << 44
    pointers = [d.outbuf, far, 0, far + 0x1000 * 7, d.outbuf + 0xfff]
    for batch in range(24):
        n = rnd.randint(1, 1 << d.aq_log)
        for i in range(n):
            op = rnd.choice([rnd.randint(0, 255)] +
                            [v for k, v in K.items()
                             if k.startswith("KITE_CMD_")] * 3)
            payload = bytearray(rnd.getrandbits(8) for _ in range(
                C.KITE_AQ_PAYLOAD_SIZE))
            # Keep DMA away from the test's own rings: out buffers and ring
            # addresses point at the scratch buffer or at unmapped space;
            # out buffer lengths are mostly sizes of results.
            for off, size in DMA_ADDRS:
                put_int(payload, off, size, rnd.choice(pointers))
            for off, size in OUT_LENS:
                if rnd.random() < 0.7:
                    put_int(payload, off, size, rnd.choice(
                        [0, 1, PORT_ATTR_SIZE, DEVICE_ATTR_SIZE, STATS_SIZE,
                         4096, 0xffffffff]))
            uctx = rnd.choice([0, 0, 0, 1, 2, 255, 256, 0xffffffff])
            flags = 0 if rnd.random() < 0.9 else rnd.randint(1, 255)
            d.submit(op, bytes(payload), uctx=uctx, flags=flags, ring=False)
        d.wr(C.KITE_REG_AQ_DB, d.aq_pi)
        for i in range(n):
            _, st, _, _ = d.wait_cqe()
            check(st in KNOWN_STATUS, "unknown status 0x%x" % st)
        check_eq(d.status() & (C.KITE_STATUS_READY | C.KITE_STATUS_FATAL),
                 C.KITE_STATUS_READY, "status after batch %d" % batch)
    # Random doorbells on every page while READY: ignored, never fatal.
    for i in range(300):
        page = rnd.choice([0, 0, 1, rnd.randrange(C.KITE_DB_NUM_PAGES)])
        off = rnd.choice([C.KITE_DB_SQ, C.KITE_DB_RQ, C.KITE_DB_CQ,
                          C.KITE_DB_EQ, C.KITE_DB_EQ,
                          rnd.randrange(0, C.KITE_DB_PAGE_SIZE, 8)])
        val = rnd.choice([rnd.getrandbits(64), random_doorbell(rnd)])
        d.q.writeq(d.db + page * C.KITE_DB_PAGE_SIZE + off, val)
    check_eq(d.status() & (C.KITE_STATUS_READY | C.KITE_STATUS_FATAL),
             C.KITE_STATUS_READY, "status after random doorbells")
    # Random register writes (ring bases only into unmapped space), then a
    # reset brings the device back.
    regs = [r for k, r in K.items() if k.startswith("KITE_REG_") and
            k not in ("KITE_REG_DEV_CTRL",) and not k.endswith("BASE_LO")]
    for i in range(400):
        reg = rnd.choice(regs + [rnd.randrange(0, C.KITE_REGS_SIZE, 4)])
        d.wr(reg, rnd.choice([0, 1, 2, 3, 7, 0xffffffff, rnd.getrandbits(32)]))
    check(env.q.proc.poll() is None, "QEMU died")
    d.bring_up()
    d.exec_ok(C.KITE_CMD_QUERY_DEVICE,
              out_buf_payload(d.outbuf, DEVICE_ATTR_SIZE))


@test("fault")
def test_fault_opcode(env):
    d = env.dev[0]
    d.bring_up()
    st, out = d.exec(C.KITE_CMD_ALLOC_PD)
    check_eq(st, C.KITE_STS_INTERNAL, "ALLOC_PD with x-fault-opcode")
    check_eq(out[0], 0, "no handle")
    st, _ = d.exec(C.KITE_CMD_ALLOC_UCTX)
    check_eq(st, C.KITE_STS_OK, "other opcodes work")
    check_eq(stats(d).num_pd, 0, "num_pd (not executed)")


@test("fault_status")
def test_fault_status(env):
    d = env.dev[0]
    d.bring_up()
    st, _, _ = d.query(C.KITE_CMD_QUERY_PORT, PORT_ATTR_SIZE,
                       port=C.KITE_PORT_NUM)
    check_eq(st, C.KITE_STS_BUSY, "QUERY_PORT with x-fault-status=BUSY")


@test("hang")
def test_fault_hang_opcode(env):
    d = env.dev[0]
    d.bring_up()
    d.exec_ok(C.KITE_CMD_ALLOC_PD)
    d.submit(C.KITE_CMD_ALLOC_UCTX)
    d.submit(C.KITE_CMD_ALLOC_PD)
    try:
        d.wait_cqe(timeout=0.3)
        raise TestFailure("completion after the hanging opcode")
    except TestFailure as e:
        if "no admin completion" not in str(e):
            raise
    st = d.status()
    check(st & C.KITE_STATUS_READY and not st & C.KITE_STATUS_FATAL,
          "a hung device still reports READY (status 0x%x)" % st)
    d.bring_up()
    d.exec_ok(C.KITE_CMD_ALLOC_PD)


@test("fault_status")
def test_fault_status_ok_rejected(env):
    """x-fault-status=0 (OK) would report success without running."""
    cmd = [env.qemu_bin, "-machine", "q35", "-accel", "qtest", "-nodefaults",
           "-display", "none", "-L", "/usr/share/seabios",
           "-L", "/usr/share/qemu", "-device",
           "kite,x-fault-opcode=%d,x-fault-status=%d" %
           (C.KITE_CMD_ALLOC_PD, C.KITE_STS_OK)]
    try:
        r = subprocess.run(cmd, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=CMD_TIMEOUT * 3)
    except subprocess.TimeoutExpired:
        raise TestFailure("QEMU started with x-fault-status=0")
    out = r.stdout.decode(errors="replace")
    check(r.returncode != 0, "QEMU exit status 0 with x-fault-status=0")
    check("x-fault-status must be an error status" in out,
          "no error message: %r" % out[-300:])
