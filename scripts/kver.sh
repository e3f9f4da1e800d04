#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# kver.sh [--image-only]: print the guest kernel version, the one place that
# decides it. The guest kernel is Debian's 6.1 package (linux-image-amd64),
# never the host's running kernel: the newest K (sort -V) whose name matches
# ^6\.1\.0-[0-9]+-amd64$ exactly (not -cloud-amd64 or -rt-amd64) and that has
#   /boot/vmlinuz-K, /lib/modules/K/kernel and /lib/modules/K/build
# (--image-only: without the build/ check, to find the image whose headers
# install-deps.sh must install). Exit 1, printing nothing, when there is none.
# KITE_SYSROOT (default empty) prefixes every path (tests use a fake tree).
set -euo pipefail

root=${KITE_SYSROOT:-}
need_build=1
case ${1:-} in
--image-only) need_build=0 ;;
"") ;;
*) echo "usage: $0 [--image-only]" >&2; exit 2 ;;
esac

cands=()
for d in "$root"/lib/modules/6.1.0-*-amd64; do
	k=${d##*/}
	[[ $k =~ ^6\.1\.0-[0-9]+-amd64$ ]] || continue
	[ -f "$root/boot/vmlinuz-$k" ] && [ -d "$root/lib/modules/$k/kernel" ] || continue
	if [ "$need_build" = 1 ] && [ ! -d "$root/lib/modules/$k/build" ]; then
		continue
	fi
	cands+=("$k")
done
[ ${#cands[@]} -gt 0 ] || exit 1
printf '%s\n' "${cands[@]}" | sort -V | tail -n 1
