# SPDX-License-Identifier: GPL-2.0
#
# Kite top-level build. See README.md.
#
#   make / make all   dependencies, kite.ko and kite_ib.ko, QEMU, rdma-core
#                     with the kite provider (out/rdma-core), perftest 25.01 built on it
#                     (out/perftest), guest kernel + initramfs, the capture
#                     checker (out/capture/kite-pcap)
#   make check        all of the above, then every test suite; last line of
#                     output is "N passed, N failed" (SUITES="vm host" picks
#                     suites, T=PATTERN tests or groups in them: see
#                     Documentation/kite/testing.rst)
#   make demo         two guests linked by a socket netdev: rdma link, ip, ping,
#                     ibv_rc_pingpong and ib_write_bw between them
#   make bench        perftest over Kite and over Soft-RoCE (rxe on virtio-net)
#                     in the same two guests, one table with ratios (bench/run.sh;
#                     not part of make check)
#   make bench-engine the RoCEv2 engine alone on the host against memcpy
#                     (bench/engine; ARGS="-m 1024 -n 2000" passes options)
#   make fuzz         the engine's libFuzzer targets (tests/fuzz), each for
#                     FUZZ_SECS seconds (default 600): executions, exec/s,
#                     coverage and crashes (not part of make check, which
#                     replays their corpora in its fuzz suite)
#   make packages     the Debian packages under out/deb/ (kite-dkms_<version>_all.deb)
#   make install      on a host with the NIC: the modules built for the running
#                     kernel (KREL=...), the provider and kite.driver, depmod
#                     (scripts/install.sh; DESTDIR=... installs elsewhere);
#                     make uninstall removes them
#   make clean        remove build outputs (out/, module objects)
#
# Kbuild reads the top-level Kbuild file (not this Makefile) for the modules.

# The guest kernels are Debian's packages of two lines, 6.1 (the default)
# and 6.12, never the host's running kernel. scripts/kver.sh picks them; it
# runs inside the recipes (after `deps` has installed the headers), never at
# parse time. `make module` (scripts/build-modules.sh) builds both lines:
# out/<release>/*.ko, and out/*.ko for the default line. KDIR=... builds
# against that tree alone.
KDIR ?=
OUT := out
SUITES ?=
# T: a test selection handed to each suite (scripts/check.sh --test).
T ?=

.PHONY: all deps module qemu qemu-fuzz rdma-core perftest initramfs capture packages install uninstall check demo bench bench-engine fuzz soak clean

all: deps module qemu rdma-core perftest initramfs capture

deps:
	@bash scripts/install-deps.sh

# KDIR reaches the script's environment (make exports command-line
# variables); an empty one means "every line".
module: | deps
	@bash scripts/build-modules.sh

qemu: | deps
	@bash scripts/build-qemu.sh

# QEMU with ASan, UBSan and libFuzzer, under out/qemu-fuzz/: generic-fuzz of
# the device (qemu-fuzz-x86_64) and the qtest suite's sanitizer pass
# (qemu-system-x86_64). Not part of `all`; see scripts/check.sh.
qemu-fuzz: | deps
	@KITE_QEMU_FLAVOR=fuzz bash scripts/build-qemu.sh

rdma-core: | deps
	@bash scripts/build-rdma-core.sh

# perftest builds against out/rdma-core's headers and libraries.
perftest: rdma-core
	@bash scripts/build-perftest.sh

initramfs: module rdma-core perftest
	@bash scripts/mkinitramfs.sh

# The link capture checker (tests/capture: out/capture/kite-pcap).
capture: | deps
	@$(MAKE) --no-print-directory -C tests/capture

# The Debian packages, under out/deb/: kite-dkms_<version>_all.deb (the
# modules' sources for DKMS; <version>: scripts/version.sh).
packages: | deps
	@bash scripts/build-dkms-deb.sh

# For a host with the NIC: out/<KREL>/*.ko (KREL: the running kernel unless
# given) into /lib/modules/KREL/updates/kite, the provider and kite.driver
# from out/rdma-core, depmod (DESTDIR=DIR: into a scratch root); nothing is
# built here. `make uninstall` removes them.
install uninstall:
	@bash scripts/install.sh $@

# T reaches the recipe's environment (make exports command-line variables),
# which keeps its quoting intact.
check:
	@bash scripts/check.sh $(if $(T),--test "$$T") $(SUITES)

demo: all
	@bash scripts/demo.sh

bench: all
	@bash bench/run.sh

# Host only: needs no guest, QEMU or VM lock.
bench-engine:
	@$(MAKE) --no-print-directory -C bench/engine run

# An hour (KITE_SOAK_SECS) of verified mixed traffic under loss and link
# flaps, Kite<->Kite and Kite<->rxe (tests/vm/soak.sh); not in make check.
soak: all
	@bash tests/vm/run.sh soak

# Host only: clang with libFuzzer, no guest, QEMU or VM lock.
fuzz: qemu-fuzz
	@$(MAKE) --no-print-directory -C tests/fuzz fuzz $(if $(FUZZ_SECS),FUZZ_SECS=$(FUZZ_SECS))

clean:
	@kdir="$(KDIR)"; [ -n "$$kdir" ] || kdir=/lib/modules/$$(bash scripts/kver.sh 2>/dev/null)/build; \
	if [ -f Kbuild ] && [ -d "$$kdir" ]; then $(MAKE) -C "$$kdir" M=$(CURDIR) clean; fi
	@if [ -f tests/host/Makefile ]; then $(MAKE) -C tests/host clean; fi
	@if [ -f tests/fuzz/Makefile ]; then $(MAKE) -C tests/fuzz clean; fi
	rm -rf $(OUT)
