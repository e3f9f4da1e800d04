#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Kite VM integration tests (issue 2). Boots guests with scripts/vm.sh in a
# few groups, so that one boot runs many checks:
#   pair   two guests a/b linked by a socket netdev: device and sysfs, GID
#          table, ping, 8 MiB TCP + sha256, link down/up (host hook), 20
#          load/unload cycles and leak checks (pair-a.sh, pair-b.sh, pair.hook);
#          rdma-core with the kite provider: ibv_devices, ibv_devinfo, the
#          verbs test program kite-verbs.c and the raw uverbs bad-udata test
#          kite-uverbs-fuzz.c (both built into the image); 3 GiB guests
#   fault  two unlinked guests: fault-opcode=1 (QUERY_DEVICE fails) and
#          fault-hang-opcode=1 (device stops answering)
#
#   tests/vm/run.sh [GROUP...]      (default: all groups)
#
# Each guest script declares how many results it prints (plan N); the
# launcher counts missing ones as failures. Each group is judged like a suite
# of make check (scripts/lib/suite.sh: a missing summary, a non-zero exit
# without a failure, or "0 passed, 0 failed" count as failures).
# Last line: "vm: N passed, N failed[, N skipped]"; exit 1 on any failure.
# Console logs: out/logs/<group>/<guest>.log.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
t=tests/vm
# shellcheck source=scripts/lib/suite.sh
. scripts/lib/suite.sh
SUITE_TMP=$(mktemp -d /tmp/kite-vmrun.XXXXXX) || exit 1
trap 'rm -rf "$SUITE_TMP"' EXIT
trap 'bounded_kill; exit 130' INT
trap 'bounded_kill; exit 143' TERM

# group_NAME: sets cmd (the launcher command) and secs (its own timeout; the
# group as a whole gets 60 s more).
group_pair() {
	secs=420
	# shellcheck disable=SC2054 # "a,b" is one argument
	# 3 GiB guests: guest a registers a 1 GiB MR and 200 256 MiB MRs
	# (vm.py's --mem applies to both guests; TCG allocates lazily).
	cmd=(scripts/vm.sh --test pair --timeout "$secs" --mem 3G --include "$t/lib.sh"
		--link a,b --hook "bash $top/$t/pair.hook"
		"a=$t/pair-a.sh" "b=$t/pair-b.sh")
}

group_fault() {
	secs=300
	# QUERY_DEVICE is admin opcode 1 (KITE_CMD_QUERY_DEVICE in kite_hw.h).
	cmd=(scripts/vm.sh --test fault --timeout "$secs" --include "$t/lib.sh"
		--no-net status --no-net hang
		--props status=fault-opcode=1 --props hang=fault-hang-opcode=1
		"status=$t/fault-status.sh" "hang=$t/fault-hang.sh")
}

groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=(pair fault)

pass=0 fail=0 skip=0
# The guest image must match out/kite.ko (a no-op when it does).
if ! scripts/mkinitramfs.sh; then
	echo "FAIL vm/image: scripts/mkinitramfs.sh failed (is out/kite.ko built? run 'make all')"
	echo "vm: 0 passed, 1 failed"
	exit 1
fi
for g in "${groups[@]}"; do
	if ! declare -F "group_$g" >/dev/null; then
		echo "FAIL vm/$g: no such group"
		fail=$((fail + 1))
		continue
	fi
	"group_$g"
	run_suite "$g" $((secs + 60)) "${cmd[@]}"
	[ "$S_FAIL" -eq 0 ] || echo "# group $g: logs in out/logs/$g/"
	pass=$((pass + S_PASS)) fail=$((fail + S_FAIL)) skip=$((skip + S_SKIP))
	echo "# $S_NOTE"
done

summary="vm: $pass passed, $fail failed"
[ "$skip" -gt 0 ] && summary="$summary, $skip skipped"
echo "$summary"
[ "$fail" -eq 0 ]
