#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Install everything Kite needs from Debian's archive. Idempotent and quiet
# unless something fails. deb-src entries are derived from the machine's own
# apt sources so that no archive host is named in this repository.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)

PKGS=(
	build-essential bc bison flex kmod cpio xz-utils zstd python3
	libelf-dev libssl-dev dwarves sparse zlib1g-dev
	linux-image-amd64 linux-headers-amd64 linux-source-6.1
	ninja-build meson pkg-config libglib2.0-dev libpixman-1-dev libfdt-dev
	seabios qemu-system-data ipxe-qemu
	busybox-static iproute2 ethtool iputils-ping netcat-openbsd
	libcmocka-dev dpkg-dev
	cmake libnl-3-dev libnl-route-3-dev libudev-dev
	libpci-dev
	tshark
	nvme-cli fio nfs-kernel-server nfs-common
	libucx0 ucx-utils
	clang llvm libclang-rt-14-dev
	openmpi-bin libopenmpi-dev dropbear-bin
)
# Wait for another apt/dpkg (e.g. unattended-upgrades) instead of failing.
APT_OPTS=(-o DPkg::Lock::Timeout=600)

log=$(mktemp /tmp/kite-deps.XXXXXX)
trap 'rm -f "$log"' EXIT

installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

need=()
for p in "${PKGS[@]}"; do
	installed "$p" || need+=("$p")
done

# archive_uri: the first Debian archive URI the machine's apt sources use for
# bookworm (deb822 .sources, else one-line .list entries, whose optional
# "[key=value ...]" block comes before the URI).
archive_uri() {
	local uri
	uri=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
	if [ -z "$uri" ]; then
		uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk '
			$1 == "deb" {
				i = 2
				if ($i ~ /^\[/) {
					while ($i !~ /\]$/ && i < NF)
						i++
					i++
				}
				if ($(i + 1) == "bookworm") { print $i; exit }
			}' || true)
	fi
	echo "$uri"
}

add_src_list() {
	# One deb-src stanza per archive URI the machine already uses, for the
	# suites whose sources we fetch (bookworm: qemu; trixie: rdma-core,
	# perftest).
	local out=/etc/apt/sources.list.d/kite-src.sources
	[ -f "$out" ] && return 1
	local uri
	uri=$(archive_uri)
	[ -n "$uri" ] || { echo "install-deps: cannot find a Debian archive URI in apt sources" >&2; exit 1; }
	cat >"$out" <<EOT
Types: deb-src
URIs: $uri
Suites: bookworm trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOT
	return 0
}

# have_sources SUITE: apt has a Sources index for SUITE.
have_sources() {
	compgen -G "/var/lib/apt/lists/*_dists_$1_*Sources*" >/dev/null
}

apt_install() {
	if ! DEBIAN_FRONTEND=noninteractive apt-get "${APT_OPTS[@]}" install -y -q \
		--no-install-recommends "$@" >"$log" 2>&1; then
		cat "$log" >&2
		echo "install-deps: apt-get install $* failed" >&2
		exit 1
	fi
}

if add_src_list || [ ${#need[@]} -gt 0 ] || ! have_sources bookworm || ! have_sources trixie; then
	if ! apt-get "${APT_OPTS[@]}" update >"$log" 2>&1; then
		cat "$log" >&2
		# A partial mirror may fail one list; carry on if the main ones came.
		echo "install-deps: apt-get update reported errors (continuing)" >&2
	fi
fi

[ ${#need[@]} -eq 0 ] || apt_install "${need[@]}"

# The headers must be those of the installed guest image (scripts/kver.sh):
# linux-headers-amd64 can lag or lead linux-image-amd64.
k=$(bash "$here/kver.sh" --image-only) ||
	{ echo "install-deps: no /boot/vmlinuz-6.1.0-N-amd64 with modules after installing linux-image-amd64" >&2; exit 1; }
if [ ! -d "/lib/modules/$k/build" ] || ! installed "linux-headers-$k"; then
	apt_install "linux-headers-$k"
fi
bash "$here/kver.sh" >/dev/null ||
	{ echo "install-deps: linux-headers-$k installed but /lib/modules/$k/build is missing" >&2; exit 1; }
exit 0
