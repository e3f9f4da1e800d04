# SPDX-License-Identifier: GPL-2.0-or-later
# Device list of Kite's qemu-system-x86_64 (configs/devices/x86_64-softmmu/kite.mak).
# q35 machine with its ISA serial port (console), virtio-net and the kite NIC.
CONFIG_PC=y
CONFIG_Q35=y
CONFIG_SERIAL_ISA=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_NET=y
CONFIG_PCI_DEVICES=y
CONFIG_KITE=y
