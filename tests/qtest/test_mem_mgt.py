# SPDX-License-Identifier: GPL-2.0-or-later
"""The memory-management commands: ALLOC_MR, REREG_MR, ALLOC_MW,
DEALLOC_MW, their field checks in the order hardware.rst gives, the
limits and capability registers behind them."""

import hw
from device import DEVICE_ATTR_SIZE, SMALL_MAX_OBJECTS, \
    SMALL_MR_CACHE_PAGES, destroy_payload
from harness import check, check_eq, test
from hw import C
from rdma import PAGE, PBL_ENTRY, Rdma, batch, key_index, key_variant, \
    obj_counts, pbl, pbl_list, reg_mr_payload
from test_rdma_objects import fill_to_limit, mr_map, table_memory

LW = C.KITE_ACCESS_LOCAL_WRITE
RW = C.KITE_ACCESS_REMOTE_WRITE
RR = C.KITE_ACCESS_REMOTE_READ
RA = C.KITE_ACCESS_REMOTE_ATOMIC
BIND = C.KITE_ACCESS_MW_BIND
OK = C.KITE_CQE_SUCCESS
PROT = C.KITE_CQE_LOC_PROT_ERR
ACC = C.KITE_CQE_LOC_ACCESS_ERR
FAR = 1 << 40               # nothing is mapped there
TRANS, PD, ACCESS = C.KITE_REREG_TRANS, C.KITE_REREG_PD, C.KITE_REREG_ACCESS


def alloc_mr_payload(pdn, max_pages, variant=0, reserved=0):
    return hw.pack("kite_cmd_alloc_mr", pdn=pdn, max_pages=max_pages,
                   key_variant=variant, reserved=reserved)


def alloc_mw_payload(pdn, typ, variant=0, reserved=bytes(3), reserved2=0):
    return hw.pack("kite_cmd_alloc_mw", pdn=pdn, type=typ,
                   key_variant=variant, reserved=reserved,
                   reserved2=reserved2)


def rereg_payload(key, flags, pdn=0, access=0, iova=0, length=0, desc=None,
                  variant=0, reserved=0):
    f = dict(key=key, flags=flags, pdn=pdn, access=access, iova=iova,
             length=length, key_variant=variant, reserved=reserved)
    if desc is not None:
        f["pbl"] = desc
    return hw.pack("kite_cmd_rereg_mr", **f)


def check_statuses(d, op, cases, what, uctx=0):
    """Each (name, payload, status[, uctx]) of cases answers its status."""
    for case in cases:
        name, payload, want = case[:3]
        st, _ = d.exec(op, payload, uctx=case[3] if len(case) > 3 else uctx)
        check_eq(st, want, "%s %s" % (what, name))


@test("main")
def test_mm_caps(env):
    """The limits behind the memory-management extensions, in the
    capability registers and QUERY_DEVICE."""
    d = env.dev[0]
    d.bring_up()
    check_eq(d.rd(C.KITE_REG_CAP_MAX_MW), C.KITE_DEF_MAX_MW, "CAP_MAX_MW")
    check_eq(d.rd(C.KITE_REG_CAP_MAX_MW), 1 << 18, "CAP_MAX_MW as rxe")
    check_eq(d.rd(C.KITE_REG_CAP_MAX_FRWR_PAGES), 512,
             "CAP_MAX_FRWR_PAGES")
    check_eq(d.rd(C.KITE_REG_CAP_MAX_FRWR_PAGES), C.KITE_DEF_MAX_FRWR_PAGES,
             "CAP_MAX_FRWR_PAGES = the model's limit")
    check_eq(d.rd(C.KITE_REG_CAP_MAX_SGE_RD), d.rd(C.KITE_REG_CAP_MAX_SGE),
             "CAP_MAX_SGE_RD = CAP_MAX_SGE")
    flags = d.rd(C.KITE_REG_CAP_FLAGS)
    check_eq(flags & (C.KITE_DEV_CAP_MEM_MGT | C.KITE_DEV_CAP_MW),
             C.KITE_DEV_CAP_MEM_MGT | C.KITE_DEV_CAP_MW, "MEM_MGT and MW")
    st, _, raw = d.query(C.KITE_CMD_QUERY_DEVICE, DEVICE_ATTR_SIZE)
    check_eq(st, C.KITE_STS_OK, "QUERY_DEVICE")
    a = hw.unpack("kite_device_attr", raw)
    check((a.abi_version & 0xffff) >= C.KITE_ABI_MINOR_MEM_MGT, "ABI minor")
    check_eq(a.max_mw, d.rd(C.KITE_REG_CAP_MAX_MW), "max_mw")
    check_eq(a.max_frwr_pages, d.rd(C.KITE_REG_CAP_MAX_FRWR_PAGES),
             "max_frwr_pages")
    check_eq(a.max_sge_rd, d.rd(C.KITE_REG_CAP_MAX_SGE_RD), "max_sge_rd")


@test("main")
def test_alloc_mr(env):
    """ALLOC_MR: kernel only, its checks in order, the free state, the
    reserved page-list room, DEREG_MR in any state by its index."""
    d = env.dev[0]
    Rdma(d, eq=False, gids=False)
    pd = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    u = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    upd = d.exec_ok(C.KITE_CMD_ALLOC_PD, uctx=u)[0]
    maxp = C.KITE_DEF_MAX_FRWR_PAGES
    check_statuses(d, C.KITE_CMD_ALLOC_MR, [
        ("from a context", alloc_mr_payload(upd, 8), C.KITE_STS_PERMISSION,
         u),
        ("from a context, every field bad",
         alloc_mr_payload(0, 0, 0x100, 1), C.KITE_STS_PERMISSION, u),
        ("unknown PD", alloc_mr_payload(pd + 100, 8), C.KITE_STS_BAD_HANDLE),
        ("a context's PD", alloc_mr_payload(upd, 8), C.KITE_STS_PERMISSION),
        ("unknown PD before max_pages", alloc_mr_payload(pd + 100, 0),
         C.KITE_STS_BAD_HANDLE),
        ("max_pages 0", alloc_mr_payload(pd, 0), C.KITE_STS_BAD_PARAM),
        ("max_pages above CAP_MAX_FRWR_PAGES", alloc_mr_payload(pd, maxp + 1),
         C.KITE_STS_BAD_PARAM),
        ("key_variant bits 31:8", alloc_mr_payload(pd, 8, 0x100),
         C.KITE_STS_BAD_PARAM),
        ("DMA_ALL in key_variant", alloc_mr_payload(pd, 8,
                                                    C.KITE_MR_DMA_ALL),
         C.KITE_STS_BAD_PARAM),
        ("reserved", alloc_mr_payload(pd, 8, 0, 1), C.KITE_STS_BAD_PARAM),
    ], "ALLOC_MR")
    check_eq(obj_counts(d)["mr"], 0, "no MR from the refused commands")
    check_eq(table_memory(d)["mr-pages"], 0, "no page room taken")
    key = d.exec_ok(C.KITE_CMD_ALLOC_MR, alloc_mr_payload(pd, maxp, 0x77))[0]
    check_eq(key_variant(key), 0x77, "key variant")
    check(key_index(key) >= 1, "key index")
    check_eq(obj_counts(d)["mr"], 1, "an ALLOC_MR MR counts as an MR")
    check_eq(table_memory(d)["mr-pages"], maxp * PBL_ENTRY,
             "page-list room reserved at ALLOC_MR")
    # Free: its key is refused like an unknown one, locally and remotely.
    for acc in (0, LW, RR, RW | LW):
        check_eq(mr_map(d, key, pd, acc, 0, 0)[0], PROT,
                 "free MR, access 0x%x" % acc)
    # Not a regular MR: REREG_MR refuses it.
    st, _ = d.exec(C.KITE_CMD_REREG_MR, rereg_payload(key, ACCESS))
    check_eq(st, C.KITE_STS_BAD_HANDLE, "REREG_MR of an ALLOC_MR MR")
    st, _ = d.exec(C.KITE_CMD_DEALLOC_PD, destroy_payload(pd))
    check_eq(st, C.KITE_STS_BUSY, "DEALLOC_PD under an ALLOC_MR MR")
    st, _ = d.exec(C.KITE_CMD_DEALLOC_MW, destroy_payload(key))
    check_eq(st, C.KITE_STS_BAD_HANDLE, "DEALLOC_MW of an MR")
    st, _ = d.exec(C.KITE_CMD_DEREG_MR, destroy_payload(key), uctx=u)
    check_eq(st, C.KITE_STS_PERMISSION, "DEREG_MR from a context")
    # DEREG_MR names it by its index: the driver's key may be a variant
    # whose REG_MR WQE never ran.
    d.exec_ok(C.KITE_CMD_DEREG_MR, destroy_payload(key ^ 0x5))
    check_eq(obj_counts(d)["mr"], 0, "num_mr after DEREG_MR")
    check_eq(table_memory(d)["mr-pages"], 0, "page room given back")
    st, _ = d.exec(C.KITE_CMD_DEREG_MR, destroy_payload(key))
    check_eq(st, C.KITE_STS_BAD_HANDLE, "DEREG_MR twice")
    # The smallest one, and a reset frees what is left.
    d.exec_ok(C.KITE_CMD_ALLOC_MR, alloc_mr_payload(pd, 1))
    check_eq(table_memory(d)["mr-pages"], PBL_ENTRY, "one page of room")
    Rdma(d, eq=False, gids=False)
    check_eq(table_memory(d)["mr-pages"], 0, "after reset")
    check_eq(obj_counts(d)["mr"], 0, "no MR after reset")


@test("small")
def test_alloc_mr_limits(env):
    """ALLOC_MR counts against CAP_MAX_MR (x-max-objects here) and takes
    its page-list room from the page-copy budget (x-mr-cache-bytes)."""
    d = env.dev[0]
    r = Rdma(d, eq=False, gids=False)
    pd = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    # The budget: SMALL_MR_CACHE_PAGES entries in all.
    a = d.exec_ok(C.KITE_CMD_ALLOC_MR, alloc_mr_payload(
        pd, SMALL_MR_CACHE_PAGES - 1))[0]
    b = d.exec_ok(C.KITE_CMD_ALLOC_MR, alloc_mr_payload(pd, 1))[0]
    st, _ = d.exec(C.KITE_CMD_ALLOC_MR, alloc_mr_payload(pd, 1))
    check_eq(st, C.KITE_STS_NO_RESOURCES, "ALLOC_MR beyond the budget")
    # A regular MR is not refused: it translates from guest memory.
    lst = r.level1(r.lists, [r.pages, r.pages + PAGE])
    k = d.exec_ok(C.KITE_CMD_REG_MR, reg_mr_payload(
        pd, 0, 0, 2 * PAGE, pbl(lst, 2, level=1), 0))[0]
    check_eq(table_memory(d)["mr-pages"], SMALL_MR_CACHE_PAGES * PBL_ENTRY,
             "the regular MR got no copy")
    d.exec_ok(C.KITE_CMD_DEREG_MR, destroy_payload(k))
    d.exec_ok(C.KITE_CMD_DEREG_MR, destroy_payload(b))
    b = d.exec_ok(C.KITE_CMD_ALLOC_MR, alloc_mr_payload(pd, 1))[0]
    d.exec_ok(C.KITE_CMD_DEREG_MR, destroy_payload(a))
    d.exec_ok(C.KITE_CMD_DEREG_MR, destroy_payload(b))
    # The object limit: regular MRs fill the table, then ALLOC_MR finds no
    # room (and reserves nothing).
    res = batch(d, [(C.KITE_CMD_REG_MR, reg_mr_payload(
        pd, 0, 0, PAGE, pbl(r.pages, 1), 0), 0)] * SMALL_MAX_OBJECTS)
    check(all(s == C.KITE_STS_OK for s, _ in res), "REG_MR to the limit")
    st, _ = d.exec(C.KITE_CMD_ALLOC_MR, alloc_mr_payload(pd, 1))
    check_eq(st, C.KITE_STS_NO_RESOURCES, "ALLOC_MR beyond CAP_MAX_MR")
    check_eq(table_memory(d)["mr-pages"], 0, "nothing reserved")
    d.exec_ok(C.KITE_CMD_DEREG_MR, destroy_payload(res[0][1][0]))
    d.exec_ok(C.KITE_CMD_ALLOC_MR, alloc_mr_payload(pd, 1))


@test("main")
def test_alloc_mw(env):
    """ALLOC_MW and DEALLOC_MW: checks in order, ownership, the unbound
    state, references on the PD and the context."""
    d = env.dev[0]
    Rdma(d, eq=False, gids=False)
    pd = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    u = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    upd = d.exec_ok(C.KITE_CMD_ALLOC_PD, uctx=u)[0]
    t1, t2 = C.KITE_MW_TYPE_1, C.KITE_MW_TYPE_2
    check_statuses(d, C.KITE_CMD_ALLOC_MW, [
        ("unknown PD", alloc_mw_payload(pd + 100, t1), C.KITE_STS_BAD_HANDLE),
        ("unknown PD before the type", alloc_mw_payload(pd + 100, 0),
         C.KITE_STS_BAD_HANDLE),
        ("a context's PD", alloc_mw_payload(upd, t1), C.KITE_STS_PERMISSION),
        ("the kernel's PD from a context", alloc_mw_payload(pd, t1),
         C.KITE_STS_PERMISSION, u),
        ("type 0", alloc_mw_payload(pd, 0), C.KITE_STS_BAD_PARAM),
        ("type 3", alloc_mw_payload(pd, 3), C.KITE_STS_BAD_PARAM),
        ("reserved", alloc_mw_payload(pd, t2, reserved=b"\0\1\0"),
         C.KITE_STS_BAD_PARAM),
        ("reserved2", alloc_mw_payload(pd, t2, reserved2=1),
         C.KITE_STS_BAD_PARAM),
        ("key_variant bits 31:8", alloc_mw_payload(pd, t1, 0x100),
         C.KITE_STS_BAD_PARAM),
    ], "ALLOC_MW")
    w1 = d.exec_ok(C.KITE_CMD_ALLOC_MW, alloc_mw_payload(pd, t1, 0x11))[0]
    w2 = d.exec_ok(C.KITE_CMD_ALLOC_MW, alloc_mw_payload(pd, t2, 0x22))[0]
    uw = d.exec_ok(C.KITE_CMD_ALLOC_MW, alloc_mw_payload(upd, t2, 3),
                   uctx=u)[0]
    check_eq([key_variant(k) for k in (w1, w2, uw)], [0x11, 0x22, 3],
             "key variants")
    check_eq(len(set(key_index(k) for k in (w1, w2, uw))), 3,
             "distinct indexes")
    # Windows and MRs share the key space: the next MR takes another index.
    mr = d.exec_ok(C.KITE_CMD_ALLOC_MR, alloc_mr_payload(pd, 1))[0]
    check(key_index(mr) not in [key_index(k) for k in (w1, w2, uw)],
          "an MR on a window's index")
    check_eq(obj_counts(d)["mr"], 1, "windows are not MRs")
    # Unbound: the keys are refused on every access.
    for k, p in ((w1, pd), (w2, pd), (uw, upd)):
        for acc in (0, LW, RR, RW | RR):
            check_eq(mr_map(d, k, p, acc, 0, 16)[0], PROT,
                     "unbound window 0x%x, access 0x%x" % (k, acc))
    # A window is not an MR, an MR is not a window.
    st, _ = d.exec(C.KITE_CMD_DEREG_MR, destroy_payload(w1))
    check_eq(st, C.KITE_STS_BAD_HANDLE, "DEREG_MR of a window")
    st, _ = d.exec(C.KITE_CMD_REREG_MR, rereg_payload(w1, ACCESS))
    check_eq(st, C.KITE_STS_BAD_HANDLE, "REREG_MR of a window")
    st, _ = d.exec(C.KITE_CMD_DEALLOC_MW, destroy_payload(mr))
    check_eq(st, C.KITE_STS_BAD_HANDLE, "DEALLOC_MW of an MR")
    # References: the PD and the context stay while windows exist.
    st, _ = d.exec(C.KITE_CMD_DEALLOC_PD, destroy_payload(upd), uctx=u)
    check_eq(st, C.KITE_STS_BUSY, "DEALLOC_PD under a window")
    st, _ = d.exec(C.KITE_CMD_DEALLOC_UCTX, destroy_payload(u))
    check_eq(st, C.KITE_STS_BUSY, "DEALLOC_UCTX with a window")
    # DEALLOC_MW: owner only; by index, any variant.
    check_statuses(d, C.KITE_CMD_DEALLOC_MW, [
        ("unknown", destroy_payload(0), C.KITE_STS_BAD_HANDLE),
        ("beyond the table", destroy_payload(0xffffffff),
         C.KITE_STS_BAD_HANDLE),
        ("a context's window from the kernel", destroy_payload(uw),
         C.KITE_STS_PERMISSION),
        ("the kernel's window from a context", destroy_payload(w1),
         C.KITE_STS_PERMISSION, u),
    ], "DEALLOC_MW")
    d.exec_ok(C.KITE_CMD_DEALLOC_MW, destroy_payload(uw ^ 0x80), uctx=u)
    d.exec_ok(C.KITE_CMD_DEALLOC_PD, destroy_payload(upd), uctx=u)
    d.exec_ok(C.KITE_CMD_DEALLOC_UCTX, destroy_payload(u))
    d.exec_ok(C.KITE_CMD_DEALLOC_MW, destroy_payload(w1))
    st, _ = d.exec(C.KITE_CMD_DEALLOC_MW, destroy_payload(w1))
    check_eq(st, C.KITE_STS_BAD_HANDLE, "DEALLOC_MW twice")
    d.exec_ok(C.KITE_CMD_DEALLOC_MW, destroy_payload(w2))
    d.exec_ok(C.KITE_CMD_DEREG_MR, destroy_payload(mr))
    d.exec_ok(C.KITE_CMD_DEALLOC_PD, destroy_payload(pd))


@test("small")
def test_mw_exhaustion(env):
    """Windows up to the limit (x-max-objects), then NO_RESOURCES; MRs
    have a limit of their own."""
    d = env.dev[0]
    r = Rdma(d, eq=False, gids=False)
    pd = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    keys = fill_to_limit(d, C.KITE_CMD_ALLOC_MW, alloc_mw_payload(
        pd, C.KITE_MW_TYPE_2), "ALLOC_MW")
    st, _ = d.exec(C.KITE_CMD_ALLOC_MW, alloc_mw_payload(pd, C.KITE_MW_TYPE_1))
    check_eq(st, C.KITE_STS_NO_RESOURCES, "a type-1 window beyond the limit")
    k = d.exec_ok(C.KITE_CMD_REG_MR, reg_mr_payload(
        pd, 0, 0, PAGE, pbl(r.pages, 1), 0))[0]
    check(key_index(k) not in [key_index(w) for w in keys], "shared index")
    d.exec_ok(C.KITE_CMD_DEALLOC_MW, destroy_payload(keys[5]))
    again = d.exec_ok(C.KITE_CMD_ALLOC_MW, alloc_mw_payload(
        pd, C.KITE_MW_TYPE_1))[0]
    check_eq(key_index(again), key_index(keys[5]), "the freed index again")
    res = batch(d, [(C.KITE_CMD_DEALLOC_MW, destroy_payload(w), 0)
                    for w in keys[:5] + keys[6:] + [again]])
    check(all(s == C.KITE_STS_OK for s, _ in res), "DEALLOC_MW of all")
    d.exec_ok(C.KITE_CMD_DEREG_MR, destroy_payload(k))
    d.exec_ok(C.KITE_CMD_DEALLOC_PD, destroy_payload(pd))


def rereg_setup(d, r):
    """A PD and a regular MR of 3 pages at iova 0x7000800 (level 1)."""
    pd = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    pages = [r.pages + i * PAGE for i in range(6)]
    lst = r.level1(r.lists, pages[:3])
    key = d.exec_ok(C.KITE_CMD_REG_MR, reg_mr_payload(
        pd, LW | RR, 0x7000800, 0x2000, pbl(lst, 3, level=1), 0x40))[0]
    return pd, pages, key


@test("main")
def test_rereg_mr_checks(env):
    """REREG_MR refusals, one check at a time in the order of
    hardware.rst; none of them changes the MR."""
    d = env.dev[0]
    r = Rdma(d, eq=False, gids=False)
    pd, pages, key = rereg_setup(d, r)
    u = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    upd = d.exec_ok(C.KITE_CMD_ALLOC_PD, uctx=u)[0]
    dma = d.exec_ok(C.KITE_CMD_REG_MR, reg_mr_payload(
        pd, LW, 0, 0, None, C.KITE_MR_DMA_ALL))[0]
    frwr = d.exec_ok(C.KITE_CMD_ALLOC_MR, alloc_mr_payload(pd, 4))[0]
    new_list = r.level1(r.lists + 0x100, pages[3:6])
    good = pbl(new_list, 3, level=1)
    max_size = C.KITE_DEF_MAX_MR_SIZE
    before = mr_map(d, key, pd, RR, 0x7000800, 0x2000)
    check_eq(before[0], OK, "the MR maps")
    bad = [
        ("unknown key", rereg_payload(key + 0x100, ACCESS, access=LW),
         C.KITE_STS_BAD_HANDLE),
        ("stale variant", rereg_payload(key ^ 1, ACCESS, access=LW),
         C.KITE_STS_BAD_HANDLE),
        ("an ALLOC_MR MR", rereg_payload(frwr, ACCESS, access=LW),
         C.KITE_STS_BAD_HANDLE),
        ("unknown key before the flags", rereg_payload(key + 0x100, 0),
         C.KITE_STS_BAD_HANDLE),
        ("from another context", rereg_payload(key, ACCESS, access=LW),
         C.KITE_STS_PERMISSION, u),
        ("from another context before the flags", rereg_payload(key, 0),
         C.KITE_STS_PERMISSION, u),
        ("a DMA MR", rereg_payload(dma, ACCESS, access=LW),
         C.KITE_STS_NOT_SUPPORTED),
        ("no flags", rereg_payload(key, 0), C.KITE_STS_BAD_PARAM),
        ("an unknown flag", rereg_payload(key, ACCESS | 8, access=LW),
         C.KITE_STS_BAD_PARAM),
        ("TRANS: length 0", rereg_payload(
            key, TRANS, iova=0, length=0, desc=good), C.KITE_STS_BAD_PARAM),
        ("TRANS: length above max_mr_size", rereg_payload(
            key, TRANS, length=max_size + 1, desc=pbl(
                FAR, (max_size >> 30) + 1, 30)), C.KITE_STS_BAD_PARAM),
        ("TRANS: iova + length wraps", rereg_payload(
            key, TRANS, iova=(1 << 64) - PAGE, length=2 * PAGE,
            desc=pbl(r.pages, 2)), C.KITE_STS_BAD_PARAM),
        ("TRANS: npages not the pages touched", rereg_payload(
            key, TRANS, iova=0x800, length=0x2000, desc=pbl(
                new_list, 2, level=1)), C.KITE_STS_BAD_PARAM),
        ("TRANS: bad length before an unknown PD", rereg_payload(
            key, TRANS | PD, pdn=pd + 100, length=0, desc=good),
         C.KITE_STS_BAD_PARAM),
        ("TRANS: page size not supported", rereg_payload(
            key, TRANS, length=0x2000, desc=pbl(r.pages, 1, 13)),
         C.KITE_STS_BAD_PARAM),
        ("TRANS: bad page list entry", rereg_payload(
            key, TRANS, iova=0x800, length=0x2000, desc=pbl(
                r.level1(r.lists + 0x200, [pages[3], 0, pages[5]]), 3,
                level=1)), C.KITE_STS_BAD_PARAM),
        ("TRANS: unreadable page list", rereg_payload(
            key, TRANS, iova=0x800, length=0x2000, desc=pbl(FAR, 3,
                                                            level=1)),
         C.KITE_STS_DMA_ERROR),
        ("PD: unknown", rereg_payload(key, PD, pdn=pd + 100),
         C.KITE_STS_BAD_HANDLE),
        ("PD: another context's", rereg_payload(key, PD, pdn=upd),
         C.KITE_STS_PERMISSION),
        ("PD: unknown before bad access", rereg_payload(
            key, PD | ACCESS, pdn=pd + 100, access=RW),
         C.KITE_STS_BAD_HANDLE),
        ("ACCESS: an unknown bit", rereg_payload(key, ACCESS,
                                                 access=BIND << 1),
         C.KITE_STS_BAD_PARAM),
        ("ACCESS: REMOTE_WRITE without LOCAL_WRITE", rereg_payload(
            key, ACCESS, access=RW), C.KITE_STS_BAD_PARAM),
        ("ACCESS: REMOTE_ATOMIC without LOCAL_WRITE", rereg_payload(
            key, ACCESS, access=RA), C.KITE_STS_BAD_PARAM),
        ("ACCESS: bad access before an unreadable list", rereg_payload(
            key, TRANS | ACCESS, access=RW, iova=0x800, length=0x2000,
            desc=pbl(FAR, 3, level=1)), C.KITE_STS_BAD_PARAM),
        ("iova without TRANS", rereg_payload(key, ACCESS, access=LW,
                                             iova=0x1000),
         C.KITE_STS_BAD_PARAM),
        ("length without TRANS", rereg_payload(key, PD, pdn=pd,
                                               length=0x1000),
         C.KITE_STS_BAD_PARAM),
        ("pbl without TRANS", rereg_payload(key, ACCESS, access=LW,
                                            desc=pbl(0, 0, 0, 1)),
         C.KITE_STS_BAD_PARAM),
        ("pdn without PD", rereg_payload(key, ACCESS, access=LW, pdn=pd),
         C.KITE_STS_BAD_PARAM),
        ("access without ACCESS", rereg_payload(key, PD, pdn=pd,
                                                access=LW),
         C.KITE_STS_BAD_PARAM),
        ("key_variant bits 31:8", rereg_payload(key, ACCESS, access=LW,
                                                variant=0x100),
         C.KITE_STS_BAD_PARAM),
        ("reserved", rereg_payload(key, ACCESS, access=LW, reserved=1),
         C.KITE_STS_BAD_PARAM),
    ]
    check_statuses(d, C.KITE_CMD_REREG_MR, bad, "REREG_MR")
    check_eq(mr_map(d, key, pd, RR, 0x7000800, 0x2000), before,
             "the MR after the refusals")
    check_eq(table_memory(d)["mr-pages"], 7 * PBL_ENTRY,
             "page copies after the refusals (3 + 4 of ALLOC_MR)")
    st, _ = d.exec(C.KITE_CMD_DEALLOC_PD, destroy_payload(upd), uctx=u)
    check_eq(st, C.KITE_STS_OK, "no reference left on the context's PD")


@test("main")
def test_rereg_mr(env):
    """REREG_MR of translation, PD and access: same index, new key, the
    old key refused, the new state visible through the MR lookup."""
    d = env.dev[0]
    r = Rdma(d, eq=False, gids=False)
    pd, pages, key = rereg_setup(d, r)
    idx = key_index(key)
    # A new translation: iova 0x9000000, 2 pages (in reverse order, so
    # that they are not contiguous) at level 1 -> copied.
    lst = r.level1(r.lists + 0x400, [pages[5], pages[4]])
    k1 = d.exec_ok(C.KITE_CMD_REREG_MR, rereg_payload(
        key, TRANS, iova=0x9000000, length=0x1800,
        desc=pbl(lst, 2, level=1), variant=0x41))[0]
    check_eq((key_index(k1), key_variant(k1)), (idx, 0x41), "new key")
    check_eq(mr_map(d, key, pd, RR, 0x7000800, 16)[0], PROT,
             "the old key after REREG_MR")
    check_eq(mr_map(d, k1, pd, RR, 0x9000ff8, 16),
             (OK, [(pages[5] + 0xff8, 8), (pages[4], 8)]),
             "the new translation")
    check_eq(mr_map(d, k1, pd, RR, 0x9001800, 1)[0], PROT,
             "beyond the new length")
    check_eq(table_memory(d)["mr-pages"], 2 * PBL_ENTRY,
             "the new list copied, the old copy freed")
    # The copy is the device's: the driver's list may change now.
    d.q.write(lst, pbl_list([pages[0]]))
    check_eq(mr_map(d, k1, pd, RR, 0x9000000, 8)[1], [(pages[5], 8)],
             "translation from the copy")
    # A new PD: the old one loses its reference.
    pd2 = d.exec_ok(C.KITE_CMD_ALLOC_PD)[0]
    k2 = d.exec_ok(C.KITE_CMD_REREG_MR, rereg_payload(
        k1, PD, pdn=pd2, variant=0x42))[0]
    check_eq(mr_map(d, k2, pd, RR, 0x9000000, 8)[0], PROT, "the old PD")
    check_eq(mr_map(d, k2, pd2, RR, 0x9000000, 8)[0], OK, "the new PD")
    d.exec_ok(C.KITE_CMD_DEALLOC_PD, destroy_payload(pd))
    st, _ = d.exec(C.KITE_CMD_DEALLOC_PD, destroy_payload(pd2))
    check_eq(st, C.KITE_STS_BUSY, "the new PD is referenced")
    # New rights: REMOTE_READ goes, REMOTE_WRITE comes.
    k3 = d.exec_ok(C.KITE_CMD_REREG_MR, rereg_payload(
        k2, ACCESS, access=LW | RW | BIND, variant=0x43))[0]
    check_eq(mr_map(d, k3, pd2, RR, 0x9000000, 8)[0], ACC, "no REMOTE_READ")
    check_eq(mr_map(d, k3, pd2, RW, 0x9000000, 8)[0], OK, "REMOTE_WRITE")
    # All three at once, back to level 0; the same variant is allowed.
    k4 = d.exec_ok(C.KITE_CMD_REREG_MR, rereg_payload(
        k3, TRANS | PD | ACCESS, pdn=pd2, access=LW, iova=0x100,
        length=0x100, desc=pbl(pages[2], 1), variant=0x43))[0]
    check_eq(k4, k3, "the same key again")
    check_eq(mr_map(d, k4, pd2, LW, 0x100, 0x100),
             (OK, [(pages[2] + 0x100, 0x100)]), "level 0 translation")
    check_eq(table_memory(d)["mr-pages"], 0, "no copy for level 0")
    # A context's MR, re-registered by the context.
    u = d.exec_ok(C.KITE_CMD_ALLOC_UCTX)[0]
    upd = d.exec_ok(C.KITE_CMD_ALLOC_PD, uctx=u)[0]
    uk = d.exec_ok(C.KITE_CMD_REG_MR, reg_mr_payload(
        upd, 0, 0, PAGE, pbl(pages[0], 1), 1), uctx=u)[0]
    uk2 = d.exec_ok(C.KITE_CMD_REREG_MR, rereg_payload(
        uk, ACCESS, access=LW | RR, variant=2), uctx=u)[0]
    check_eq(mr_map(d, uk2, upd, RR, 0, 8)[0], OK, "the context's new key")
    d.exec_ok(C.KITE_CMD_DEREG_MR, destroy_payload(uk2), uctx=u)
    d.exec_ok(C.KITE_CMD_DEREG_MR, destroy_payload(k4))
    d.exec_ok(C.KITE_CMD_DEALLOC_PD, destroy_payload(pd2))
