#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Seed inputs of the whole-device fuzz target (QEMU's generic-fuzz).

generic-fuzz reads an input as commands separated by "FUZZ": a byte that
selects the operation (modulo the operation count), then its operands
(tests/qtest/fuzz/generic_fuzz.c of QEMU 7.2). A DMA read of guest RAM
the device makes is filled from the DMA patterns added so far, one
pattern per read in turn. The seeds drive the device the way its driver
does, with the structures packed from kite_hw.h (tests/qtest/hw.py):
bring-up, admin commands, an Ethernet frame from one device to the other
over the hub, doorbells of objects that exist. The fuzzer mutates from
there.

Usage: gen_device_seeds.py OUTDIR     (rewrites OUTDIR/*.seed)
"""

import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "qtest"))
import abi_gen  # noqa: E402
import hw  # noqa: E402
from hw import C  # noqa: E402

# generic-fuzz's operations (enum cmds).
OP_WRITE, OP_PCI_WRITE, OP_ADD_DMA_PATTERN = 3, 5, 7
OP_CLEAR_DMA_PATTERNS, OP_CLOCK_STEP = 8, 9
SEPARATOR = b"FUZZ"
SIZE_LONG, SIZE_QUAD = 2, 3
# The fuzzable regions in address order: per device BAR0 (registers),
# BAR2 (doorbells), then BAR4's MSI-X table and PBA; two devices.
REGIONS_PER_DEV = 4
BASE_REGS, BASE_DB = 0, 1
# Guest RAM the seeds place rings and buffers in.
AQ, ACQ, AEQ = 0x100000, 0x101000, 0x102000
OUTBUF, ETH_TX, ETH_RX, FRAME = 0x103000, 0x104000, 0x105000, 0x106000
EQ_RING, CQ_RING, SQ_RING, RQ_RING, MR_BUF = 0x108000, 0x110000, 0x120000, 0x130000, 0x140000
# The number the device gives the first QP (1 is the GSI QP's).
QPN = 2
# PCI config offset of the command register; memory space and bus master.
PCI_COMMAND, PCI_COMMAND_MEM_MASTER = 0x04, 0x06


class Seed:
    """One generic-fuzz input, built command by command."""

    def __init__(self):
        self.ops = []

    def op(self, code, operands=b""):
        self.ops.append(bytes([code]) + operands)

    def write32(self, dev, base, off, val):
        self.op(OP_WRITE, struct.pack("<BBxxIQ", SIZE_LONG,
                                      dev * REGIONS_PER_DEV + base, off, val))

    def write64(self, dev, base, off, val):
        self.op(OP_WRITE, struct.pack("<BBxxIQ", SIZE_QUAD,
                                      dev * REGIONS_PER_DEV + base, off, val))

    def reg(self, dev, off, val):
        self.write32(dev, BASE_REGS, off, val)

    def dma(self, data):
        """The next DMA read the device makes returns data (repeated)."""
        self.op(OP_ADD_DMA_PATTERN, b"\0\0" + data)

    def clear_dma(self):
        self.op(OP_CLEAR_DMA_PATTERNS)

    def step(self):
        self.op(OP_CLOCK_STEP)

    def bytes(self):
        return SEPARATOR.join(self.ops)


def bring_up(s, dev):
    s.op(OP_PCI_WRITE, struct.pack("<BBBxI", 1, dev, PCI_COMMAND,
                                   PCI_COMMAND_MEM_MASTER))
    for lo, log_reg, addr in ((C.KITE_REG_AQ_BASE_LO, C.KITE_REG_AQ_LOG_DEPTH,
                               AQ),
                              (C.KITE_REG_ACQ_BASE_LO,
                               C.KITE_REG_ACQ_LOG_DEPTH, ACQ),
                              (C.KITE_REG_AEQ_BASE_LO,
                               C.KITE_REG_AEQ_LOG_DEPTH, AEQ)):
        s.reg(dev, lo, addr)
        s.reg(dev, lo + 4, 0)
        s.reg(dev, log_reg, 3)
    s.reg(dev, C.KITE_REG_DEV_CTRL, C.KITE_CTRL_ENABLE)


def admin(s, dev, index, opcode, payload=b"", uctx=0):
    """Command number index (from 1) of dev: its ring entry, its doorbell."""
    cmd = hw.pack("kite_aq_cmd", hdr=dict(opcode=opcode, cmd_id=index,
                                          uctx=uctx),
                  raw=payload.ljust(C.KITE_AQ_PAYLOAD_SIZE, b"\0"))
    s.clear_dma()
    s.dma(cmd)
    s.reg(dev, C.KITE_REG_AQ_DB, index)
    s.step()


def pbl(addr, npages=1):
    return dict(addr=addr, npages=npages, page_shift=12, level=0)


def objects(s, dev):
    """PD, completion EQ, CQ, RC QP and MR of dev: commands 1..5."""
    admin(s, dev, 1, C.KITE_CMD_ALLOC_PD)
    admin(s, dev, 2, C.KITE_CMD_CREATE_EQ,
          hw.pack("kite_cmd_create_eq", ring=pbl(EQ_RING), log_depth=4,
                  msix_vector=C.KITE_MSIX_COMP_BASE))
    admin(s, dev, 3, C.KITE_CMD_CREATE_CQ,
          hw.pack("kite_cmd_create_cq", ring=pbl(CQ_RING), log_depth=4,
                  eqn=1))
    admin(s, dev, 4, C.KITE_CMD_CREATE_QP, hw.pack(
        "kite_cmd_create_qp", qp_type=C.KITE_QPT_RC, sq_log_depth=4,
        sq_log_stride=6, rq_log_depth=4, rq_log_stride=4, pdn=1,
        send_cqn=1, recv_cqn=1, sq=pbl(SQ_RING), rq=pbl(RQ_RING)))
    admin(s, dev, 5, C.KITE_CMD_REG_MR, hw.pack(
        "kite_cmd_reg_mr", pdn=1, access=0xf, iova=MR_BUF, length=0x1000,
        pbl=dict(addr=MR_BUF, npages=1, page_shift=12, level=0)))


def seeds():
    out = {}
    s = Seed()
    bring_up(s, 0)
    admin(s, 0, 1, C.KITE_CMD_QUERY_DEVICE,
          hw.pack("kite_cmd_query", out=dict(addr=OUTBUF, len=0x1000)))
    admin(s, 0, 2, C.KITE_CMD_QUERY_PORT,
          hw.pack("kite_cmd_query", out=dict(addr=OUTBUF, len=0x1000),
                  port=C.KITE_PORT_NUM))
    out["query"] = s

    s = Seed()
    bring_up(s, 0)
    objects(s, 0)
    # A send WQE's doorbell on the kernel page (producer index 1).
    s.clear_dma()
    s.dma(bytes(64))
    s.write64(0, BASE_DB, C.KITE_DB_SQ, (1 << C.KITE_DB_INDEX_SHIFT) | QPN)
    s.step()
    out["objects"] = s

    s = Seed()
    bring_up(s, 0)
    bring_up(s, 1)
    for dev, base, lo in ((0, ETH_TX, C.KITE_REG_ETH_TX_BASE_LO),
                          (1, ETH_RX, C.KITE_REG_ETH_RX_BASE_LO)):
        s.reg(dev, lo, base)
        s.reg(dev, lo + 4, 0)
        s.reg(dev, lo + 8, 2)
    s.reg(0, C.KITE_REG_ETH_CTRL, C.KITE_ETH_CTRL_TX_EN)
    s.reg(1, C.KITE_REG_ETH_CTRL,
          C.KITE_ETH_CTRL_RX_EN | C.KITE_ETH_CTRL_PROMISC)
    s.clear_dma()
    s.dma(hw.pack("kite_eth_desc", addr=ETH_RX + 0x800, len=2048))
    s.reg(1, C.KITE_REG_ETH_RX_DB, 1)
    s.clear_dma()
    # A RoCEv2 frame shape: broadcast, IPv4, UDP to 4791.
    frame = (b"\xff" * 6 + b"\x52\x54\x00\x12\x34\x56" + b"\x08\x00" +
             bytes.fromhex("4500003c000040004011000000c6120001c6120002") +
             struct.pack(">HHHH", 49152, 4791, 40, 0) + bytes(32))
    s.dma(hw.pack("kite_eth_desc", addr=FRAME, len=len(frame)))
    s.dma(frame)
    s.reg(0, C.KITE_REG_ETH_TX_DB, 1)
    s.step()
    out["eth"] = s

    s = Seed()
    bring_up(s, 1)
    objects(s, 1)
    admin(s, 1, 6, C.KITE_CMD_DESTROY_QP, hw.pack("kite_cmd_destroy",
                                                  handle=QPN))
    s.reg(1, C.KITE_REG_DEV_CTRL, 0)
    out["teardown"] = s
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    hw.load(abi_gen.build())
    os.makedirs(sys.argv[1], exist_ok=True)
    for name, s in seeds().items():
        with open(os.path.join(sys.argv[1], name + ".seed"), "wb") as f:
            f.write(s.bytes())


if __name__ == "__main__":
    main()
