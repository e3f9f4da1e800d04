#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# kver.sh [--line LINE] [--image-only]: print a guest kernel version, the
# one place that decides it. Kite builds for and boots two kernel lines of
# Debian packages, never the host's running kernel:
#   6.1   (the default line) Debian 12's linux-image-amd64: the newest K
#         (sort -V) that matches ^6\.1\.0-[0-9]+-amd64$ exactly
#   6.12  linux-image-6.12.*-amd64 (bookworm-backports, bookworm-security):
#         the newest K that matches ^6\.12\.[0-9]+\+[a-z0-9.]+-amd64$
# (not -cloud-amd64 or -rt-amd64), and that has
#   /boot/vmlinuz-K, /lib/modules/K/kernel and /lib/modules/K/build
# (--image-only: without the build/ check, to find the image whose headers
# install-deps.sh must install). Exit 1, printing nothing, when there is none.
#   kver.sh --lines   print the known lines, the default first
# KITE_SYSROOT (default empty) prefixes every path (tests use a fake tree).
set -euo pipefail

root=${KITE_SYSROOT:-}
LINES=(6.1 6.12)
need_build=1
line=${LINES[0]}
while [ $# -gt 0 ]; do
	case $1 in
	--image-only) need_build=0 ;;
	--line) [ $# -ge 2 ] || { echo "usage: $0 [--line LINE] [--image-only] | --lines" >&2; exit 2; }
		line=$2; shift ;;
	--lines) printf '%s\n' "${LINES[@]}"; exit 0 ;;
	*) echo "usage: $0 [--line LINE] [--image-only] | --lines" >&2; exit 2 ;;
	esac
	shift
done
case $line in
6.1) re='^6\.1\.0-[0-9]+-amd64$' ;;
6.12) re='^6\.12\.[0-9]+\+[a-z0-9.]+-amd64$' ;;
*) echo "kver.sh: unknown kernel line '$line' (known: ${LINES[*]})" >&2; exit 2 ;;
esac

cands=()
for d in "$root/lib/modules/$line".*-amd64; do
	k=${d##*/}
	[[ $k =~ $re ]] || continue
	[ -f "$root/boot/vmlinuz-$k" ] && [ -d "$root/lib/modules/$k/kernel" ] || continue
	if [ "$need_build" = 1 ] && [ ! -d "$root/lib/modules/$k/build" ]; then
		continue
	fi
	cands+=("$k")
done
[ ${#cands[@]} -gt 0 ] || exit 1
printf '%s\n' "${cands[@]}" | sort -V | tail -n 1
