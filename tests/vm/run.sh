#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Kite VM integration tests (issue 2). Boots guests with scripts/vm.sh in a
# few groups, so that one boot runs many checks:
#   pair   two guests a/b linked by a socket netdev: device and sysfs, GID
#          table, ping, 8 MiB TCP + sha256, link down/up (host hook), 20
#          load/unload cycles and leak checks (pair-a.sh, pair-b.sh, pair.hook);
#          rdma-core with the kite provider: ibv_devices, ibv_devinfo, and
#          the verbs test program kite-verbs.c (built into the image)
#   fault  two unlinked guests: fault-opcode=1 (QUERY_DEVICE fails) and
#          fault-hang-opcode=1 (device stops answering)
#
#   tests/vm/run.sh [GROUP...]      (default: all groups)
#
# Last line: "vm: N passed, N failed[, N skipped]"; exit 1 on any failure.
# Console logs: out/logs/<group>/<guest>.log.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
t=tests/vm

group_pair() {
	scripts/vm.sh --test pair --timeout 420 --include $t/lib.sh \
		--link a,b --hook "bash $top/$t/pair.hook" \
		a=$t/pair-a.sh b=$t/pair-b.sh
}

group_fault() {
	# QUERY_DEVICE is admin opcode 1 (KITE_CMD_QUERY_DEVICE in kite_hw.h).
	scripts/vm.sh --test fault --timeout 300 --include $t/lib.sh \
		--no-net status --no-net hang \
		--props status=fault-opcode=1 --props hang=fault-hang-opcode=1 \
		status=$t/fault-status.sh hang=$t/fault-hang.sh
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
	log=$(mktemp)
	start=$(date +%s)
	"group_$g" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	last=$(tail -n 1 "$log")
	rm -f "$log"
	if [[ $last =~ ^$g:\ ([0-9]+)\ passed,\ ([0-9]+)\ failed(,\ ([0-9]+)\ skipped)?$ ]]; then
		pass=$((pass + BASH_REMATCH[1]))
		fail=$((fail + BASH_REMATCH[2]))
		skip=$((skip + ${BASH_REMATCH[4]:-0}))
		if [ "$rc" -ne 0 ] && [ "${BASH_REMATCH[2]}" -eq 0 ]; then
			echo "FAIL vm/$g: launcher exited $rc"
			fail=$((fail + 1))
		fi
	else
		echo "FAIL vm/$g: launcher gave no summary (exit $rc; logs in out/logs/$g/)"
		fail=$((fail + 1))
	fi
	echo "# group $g: $(($(date +%s) - start))s"
done

summary="vm: $pass passed, $fail failed"
[ "$skip" -gt 0 ] && summary="$summary, $skip skipped"
echo "$summary"
[ "$fail" -eq 0 ]
