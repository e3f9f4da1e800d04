# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by the build scripts (bash).

# install_atomic SRC DST: make DST a copy of SRC (a file or a directory) such
# that DST is never seen half-copied: copy to a temporary sibling first, then
# rename it into place. A file is replaced by rename(2), so a running program
# keeps its old inode; a directory's old copy is removed just before the
# rename. Leftovers of interrupted runs (DST.tmp, DST.tmp.PID of dead
# processes) are removed first.
install_atomic() {
	local src=$1 dst=$2 tmp=$2.tmp.$$ t
	rm -rf "$dst.tmp"
	for t in "$dst".tmp.*; do
		[ -e "$t" ] || continue
		kill -0 "${t##*.}" 2>/dev/null || rm -rf "$t"
	done
	rm -rf "$tmp"
	cp -a "$src" "$tmp" || { rm -rf "$tmp"; return 1; }
	if [ -d "$tmp" ]; then
		rm -rf "$dst"
		# -T: never move into an existing directory (a concurrent install
		# may have put one there since); retry once after removing it.
		mv -T "$tmp" "$dst" 2>/dev/null || { rm -rf "$dst"; mv -T "$tmp" "$dst"; } ||
			{ rm -rf "$tmp"; return 1; }
	else
		mv -fT "$tmp" "$dst" || { rm -f "$tmp"; return 1; }
	fi
}

# install_cached INST DEST HASH: make DEST a copy of the cached tree INST,
# unless DEST/.hash already says HASH. DEST/.hash is written last, so an
# interrupted copy is never taken for a complete one.
install_cached() {
	[ "$(cat "$2/.hash" 2>/dev/null)" = "$3" ] && return 0
	rm -rf "$2" "$2.tmp"
	install_atomic "$1" "$2" || return 1
	echo "$3" >"$2/.hash"
}

# fetch_source PKG RELEASE DIR TARBALL LOG: the upstream tarball TARBALL of
# Debian's source package PKG in RELEASE, into DIR (once; apt verifies it
# against the signed Sources index; its output goes to LOG). On failure
# prints why.
fetch_source() {
	[ -f "$3/$4" ] && return 0
	if ! (cd "$3" && apt-get source --download-only --tar-only "$1/$2") >>"$5" 2>&1; then
		echo "apt-get source $1/$2 failed (deb-src for $2? run scripts/install-deps.sh)"
		return 1
	fi
	[ -f "$3/$4" ] && return 0
	echo "no $4 after apt-get source $1/$2 (not that version any more?)"
	return 1
}
