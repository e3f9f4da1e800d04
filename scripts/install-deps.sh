#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Install everything Kite needs from Debian's archive. Idempotent and quiet
# unless something fails. The deb-src entries and the bookworm-backports
# suite are derived from the machine's own apt sources so that no archive
# host is named in this repository.
#
# Two kernel lines (scripts/kver.sh): Debian 12's linux-image-amd64 (6.1,
# the default) and bookworm-backports' 6.12: the newest
# linux-image-6.12.*-amd64 the archive lists, with its headers (kite.ko and
# kite_ib.ko build against both; the guests boot both).
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
	dkms dh-dkms debhelper
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

# add_list FILE TYPE SUITE...: a stanza of TYPE (deb, deb-src) for SUITEs,
# with the archive URI the machine already uses, as
# /etc/apt/sources.list.d/FILE; return 1 when FILE is already there.
add_list() {
	local out=/etc/apt/sources.list.d/$1 type=$2 uri
	shift 2
	[ -f "$out" ] && return 1
	uri=$(archive_uri)
	[ -n "$uri" ] || { echo "install-deps: cannot find a Debian archive URI in apt sources" >&2; exit 1; }
	cat >"$out" <<EOT
Types: $type
URIs: $uri
Suites: $*
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

# have_packages SUITE: apt has a Packages index for SUITE.
have_packages() {
	compgen -G "/var/lib/apt/lists/*_dists_$1_*Packages*" >/dev/null
}

# deb-src for the suites whose sources we fetch (bookworm: qemu; trixie:
# rdma-core, perftest); bookworm-backports for the 6.12 kernel line. A
# backports Release is NotAutomatic: nothing comes from it unless named, as
# the 6.12 kernel packages are below (bookworm-security, already in the
# sources, carries the newest 6.12 builds, backports older ones).
new_src=0 new_bpo=0
add_list kite-src.sources deb-src bookworm trixie && new_src=1
add_list kite-backports.sources deb bookworm-backports && new_bpo=1
if [ "$new_src" = 1 ] || [ "$new_bpo" = 1 ] || [ ${#need[@]} -gt 0 ] ||
   ! have_sources bookworm || ! have_sources trixie || ! have_packages bookworm-backports; then
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

# candidate PKG: PKG is a real package the archive serves (a name that
# only something else Provides has no candidate, yet apt-cache show
# answers for it).
candidate() {
	local c
	c=$(apt-cache policy "$1" 2>/dev/null | sed -n 's/^  Candidate: //p')
	[ -n "$c" ] && [ "$c" != "(none)" ]
}

# The 6.12 line: the newest 6.12.N release with an amd64 image and headers
# in the archive's lists (not -cloud-amd64, -rt-amd64 or -dbg). The image
# is linux-image-R, or linux-image-R-unsigned where the signed build of R
# is not (yet) served: both install the same /boot/vmlinuz-R and modules.
# Once one is installed (scripts/kver.sh --line 6.12 finds it) the lists
# are not consulted again: a newer upload does not change the tree under
# test behind a warm run's back.
if ! bash "$here/kver.sh" --line 6.12 >/dev/null; then
	k12='' img12=''
	for r in $(apt-cache pkgnames linux-headers-6.12. 2>/dev/null |
		sed -n 's/^linux-headers-\(6\.12\.[0-9][^-]*-amd64\)$/\1/p' | sort -rV); do
		candidate "linux-headers-$r" || continue
		for img in "linux-image-$r" "linux-image-$r-unsigned"; do
			if candidate "$img"; then
				k12=$r img12=$img
				break 2
			fi
		done
	done
	[ -n "$k12" ] || { echo "install-deps: no linux-image-6.12.*-amd64 with headers in bookworm-backports" >&2; exit 1; }
	apt_install "$img12" "linux-headers-$k12"
	bash "$here/kver.sh" --line 6.12 >/dev/null ||
		{ echo "install-deps: $img12 and linux-headers-$k12 installed, but no 6.12 tree with image, modules and build/" >&2; exit 1; }
fi
exit 0
