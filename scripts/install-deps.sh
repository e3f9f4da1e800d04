#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Install everything Kite needs from Debian's archive. Idempotent and quiet
# unless something fails. deb-src entries are derived from the machine's own
# apt sources so that no archive host is named in this repository.
set -euo pipefail

PKGS=(
	build-essential bc bison flex kmod cpio xz-utils zstd python3 git
	libelf-dev libssl-dev dwarves sparse
	linux-image-amd64 linux-headers-amd64 linux-source-6.1
	ninja-build meson pkg-config libglib2.0-dev libpixman-1-dev libfdt-dev
	seabios qemu-system-data ipxe-qemu
	busybox-static iproute2 ethtool iputils-ping netcat-openbsd
	libcmocka-dev dpkg-dev
	cmake libnl-3-dev libnl-route-3-dev libudev-dev
)

log=$(mktemp /tmp/kite-deps.XXXXXX)
trap 'rm -f "$log"' EXIT

need=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		need+=("$p")
done

add_src_list() {
	# One deb-src stanza per archive URI the machine already uses, for the
	# suites whose sources we fetch (bookworm: qemu; trixie: rdma-core).
	local out=/etc/apt/sources.list.d/kite-src.sources
	[ -f "$out" ] && return 1
	local uri
	uri=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
	if [ -z "$uri" ]; then
		uri=$(awk '$1 == "deb" && $3 ~ /^bookworm$/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)
	fi
	[ -n "$uri" ] || { echo "install-deps: cannot find a Debian archive URI in apt sources" >&2; exit 1; }
	cat >"$out" <<EOF
Types: deb-src
URIs: $uri
Suites: bookworm trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
	# Keep trixie's binaries out of reach: only its sources are wanted.
	return 0
}

updated=0
if add_src_list || [ ${#need[@]} -gt 0 ] || [ ! -d /var/lib/apt/lists ] ||
	! ls /var/lib/apt/lists/*_source_Sources* >/dev/null 2>&1; then
	if ! apt-get update >"$log" 2>&1; then
		cat "$log" >&2
		# A partial mirror may fail one list; carry on if the main ones came.
		echo "install-deps: apt-get update reported errors (continuing)" >&2
	fi
	updated=1
fi

if [ ${#need[@]} -gt 0 ]; then
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		"${need[@]}" >"$log" 2>&1; then
		cat "$log" >&2
		echo "install-deps: apt-get install failed" >&2
		exit 1
	fi
fi
[ "$updated" = 1 ] && [ ${#need[@]} -eq 0 ] && true
exit 0
