#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The "lint" suite of make check: the style and static checks the project's
# rules ask for, each a result line (scripts/lib/results.sh):
#   checkpatch/FILE       the kernel's scripts/checkpatch.pl --strict
#                         --no-tree on every kernel source file (the
#                         driver's *.[ch] under drivers/, the headers under
#                         include/)
#   kbuild/LINE/sparse+W=1  for each kernel line (scripts/kver.sh --lines:
#                         6.1, 6.12), the modules of the top-level Kbuild
#                         built against its headers with sparse on every
#                         file (C=2) and W=1, in a scratch copy of the tree
#                         (out/lint/kbuild, removed after the build), so
#                         the normal `make module` objects are neither used
#                         nor touched; any warning fails (with KDIR set:
#                         one check, kbuild/sparse+W=1, against KDIR)
#   qemu-checkpatch/FILE  QEMU's own scripts/checkpatch.pl --strict on the
#                         device model and engine (qemu/**.[ch]) and on the
#                         patches to QEMU (patches/qemu/*.patch)
# Last line "lint: N passed, N failed"; exit 1 on any failure.
#
#   scripts/lint.sh [-t GLOB]   only the checks whose name matches GLOB
#                               (e.g. 'checkpatch/*', 'kbuild/*', 'kbuild/6.12/*')
#
# The kernel's checkpatch.pl (with spelling.txt and const_structs.checkpatch
# beside it, which it reads) comes from Debian's linux-source-6.1 tarball:
# the three files are copied once per tarball into
# ${KITE_CACHE:-/var/cache/kite}/lint/linux-<sha256[:12]>/ from the KUnit
# tree of the same tarball, which scripts/kunit.sh extracts
# (KITE_KUNIT_SYNC_ONLY=1) when it is not there yet.
# QEMU's comes from the QEMU 7.2 tree scripts/build-qemu.sh unpacks, or
# else from its source tarball in ${KITE_CACHE}/src.
#
# Environment: KITE_CACHE, KITE_LINUX_TARBALL (default
# /usr/src/linux-source-6.1.tar.xz), KDIR (one kernel build tree instead of
# each line's /lib/modules/$(scripts/kver.sh --line LINE)/build), KITE_JOBS
# (default 2).
# Logs: out/logs/lint/.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
# shellcheck source=scripts/lib/results.sh
. scripts/lib/results.sh

CACHE=${KITE_CACHE:-/var/cache/kite}
LCACHE=$CACHE/lint
TARBALL=${KITE_LINUX_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
JOBS=${KITE_JOBS:-2}
LOGDIR=out/logs/lint
SCRATCH=out/lint/kbuild

# checkpatch --ignore types per file, with why.
# kite_hw.h is the device ABI shared with QEMU, rdma-core and the host
# tests, where the kernel's BIT()/BIT_ULL() do not exist (QEMU's BIT() has
# another type), so it spells its bit masks as shifts: BIT_MACRO (a
# --strict CHECK) cannot apply to it.
# include/linux/kite/compat.h is the one file that tests the kernel's
# version (the drivers build from the same sources against 6.1 and 6.12):
# LINUX_VERSION_CODE, and KERNEL_VERSION() against it (both constants to
# checkpatch, so either order is a CONSTANT_COMPARISON), are its purpose.
# The tracepoint headers are TRACE_EVENT() invocations, whose arguments
# are macro calls written one per line as the kernel's own trace headers
# write them (TP_STRUCT__entry( on a line of its own, the TP_PROTO
# continuation under its own parenthesis, not under TRACE_EVENT's):
# OPEN_ENDED_LINE and PARENTHESIS_ALIGNMENT (--strict CHECKs) cannot apply.
declare -A KERNEL_IGNORE=(
	[drivers/net/ethernet/kite/kite_trace.h]=OPEN_ENDED_LINE,PARENTHESIS_ALIGNMENT
	[drivers/infiniband/hw/kite/kite_ib_trace.h]=OPEN_ENDED_LINE,PARENTHESIS_ALIGNMENT
	[include/kite/kite_hw.h]=BIT_MACRO
	[include/linux/kite/compat.h]=LINUX_VERSION_CODE,CONSTANT_COMPARISON
)

pattern=
if [ "${1:-}" = -t ]; then
	pattern=${2-}
	shift 2 || exit 2
fi
[ $# -eq 0 ] || { echo "usage: $0 [-t GLOB]" >&2; exit 2; }

mkdir -p "$LOGDIR" "$LCACHE" || exit 1
tmp=$(mktemp -d /tmp/kite-lint.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
res=$tmp/results
: >"$res"

# result LINE: print a result line and keep it for the count.
result() {
	printf '%s\n' "$1" | tee -a "$res"
}

# files PATHSPEC...: the tree's files (tracked, or new and not ignored).
files() {
	git ls-files -co --exclude-standard -- "$@" | LC_ALL=C sort -u
}

# ---- the checkers ----------------------------------------------------------

# tarball_key FILE: sha256[:12] of FILE, remembered per (path, size, mtime)
# in $LCACHE/.tarball-sum, so the 130 MB are hashed once.
tarball_key() {
	local stamp key
	stamp="$1 $(stat -c '%s %Y' "$1")" || return 1
	if [ "$(sed -n 1p "$LCACHE/.tarball-sum" 2>/dev/null)" = "$stamp" ]; then
		sed -n 2p "$LCACHE/.tarball-sum"
		return
	fi
	key=$(sha256sum "$1" | cut -c1-12) || return 1
	printf '%s\n%s\n' "$stamp" "$key" >"$LCACHE/.tarball-sum.$$"
	mv "$LCACHE/.tarball-sum.$$" "$LCACHE/.tarball-sum"
	echo "$key"
}

# kernel_checkpatch: set KERNEL_CP to the kernel's checkpatch.pl, making
# the cache entry if needed (under a lock; it appears by a rename).
CP_FILES=(checkpatch.pl spelling.txt const_structs.checkpatch)
kernel_checkpatch() {
	local key dir kunit f
	[ -f "$TARBALL" ] || { echo "$TARBALL not found (make deps)" >&2; return 1; }
	key=$(tarball_key "$TARBALL") || return 1
	dir=$LCACHE/linux-$key
	if [ ! -f "$dir/checkpatch.pl" ]; then
		exec 8>"$LCACHE/.lock"
		flock -w 600 8 || { echo "$LCACHE/.lock is held" >&2; return 1; }
		if [ ! -f "$dir/checkpatch.pl" ]; then
			rm -rf "$dir.tmp" && mkdir -p "$dir.tmp" || return 1
			# Reading three files decompresses the whole tarball,
			# which the KUnit suite extracts anyway: extract it
			# once, for both.
			kunit=$CACHE/kunit/linux-$key/scripts
			if [ ! -f "$kunit/checkpatch.pl" ]; then
				echo "# lint: extracting $TARBALL for lint and KUnit (once)"
				KITE_KUNIT_SYNC_ONLY=1 KITE_LINUX_TARBALL=$TARBALL \
					scripts/kunit.sh >"$LOGDIR/kunit-extract.log" 2>&1 || {
					cat "$LOGDIR/kunit-extract.log" >&2
					return 1
				}
			fi
			for f in "${CP_FILES[@]}"; do
				cp "$kunit/$f" "$dir.tmp/" || return 1
			done
			for f in "${CP_FILES[@]}"; do
				[ -f "$dir.tmp/$f" ] || { echo "no $f in $TARBALL" >&2; return 1; }
			done
			mv "$dir.tmp" "$dir" || return 1
		fi
		exec 8>&-
	fi
	KERNEL_CP=$dir/checkpatch.pl
}

# qemu_checkpatch: set QEMU_CP to QEMU 7.2's checkpatch.pl: from the
# newest complete tree of scripts/build-qemu.sh, else extracted from the
# source tarball it downloaded.
qemu_checkpatch() {
	local tree tarball key dir
	tree=$(find "$CACHE/qemu" -maxdepth 2 -path "$CACHE/qemu/tree-7.2*/.kite-unpacked" \
		2>/dev/null | sort -V | tail -n 1)
	tree=${tree%/.kite-unpacked}
	if [ -n "$tree" ] && [ -f "$tree/scripts/checkpatch.pl" ]; then
		QEMU_CP=$tree/scripts/checkpatch.pl
		return
	fi
	tarball=$(find "$CACHE/src" -maxdepth 1 -name 'qemu_7.2*.orig.tar.*' 2>/dev/null |
		sort -V | tail -n 1)
	[ -n "$tarball" ] || { echo "no QEMU 7.2 tree or source in $CACHE (make qemu)" >&2; return 1; }
	key=$(basename "$tarball")
	dir=$LCACHE/qemu-${key%.orig.tar.*}
	if [ ! -f "$dir/checkpatch.pl" ]; then
		rm -rf "$dir.tmp.$$" && mkdir -p "$dir.tmp.$$" || return 1
		nice -n 10 tar -xf "$tarball" -C "$dir.tmp.$$" --wildcards --no-anchored \
			--strip-components=2 scripts/checkpatch.pl || return 1
		[ -f "$dir.tmp.$$/checkpatch.pl" ] || return 1
		rm -rf "$dir" && mv "$dir.tmp.$$" "$dir" || return 1
	fi
	QEMU_CP=$dir/checkpatch.pl
}

# run_parallel CMD NAME...: run "CMD NAME" for each NAME, $JOBS at a time,
# its output in $tmp/out/<index> and its exit status in $tmp/out/<index>.rc.
run_parallel() {
	local cmd=$1 i=0 n
	shift
	rm -rf "$tmp/out" && mkdir -p "$tmp/out"
	for n in "$@"; do
		( $cmd "$n" >"$tmp/out/$i" 2>&1; echo $? >"$tmp/out/$i.rc" ) &
		i=$((i + 1))
		while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
	done
	wait
}

# checkpatch_results PREFIX NAME...: one result line per file from
# run_parallel's outputs: ok when the exit status is 0 and the summary
# counts nothing; else FAIL with the counts, and the report indented.
checkpatch_results() {
	local prefix=$1 i=0 n out total
	shift
	for n in "$@"; do
		out=$tmp/out/$i
		total=$(grep -E '^total: [0-9]+ errors, [0-9]+ warnings' "$out" | tail -n 1)
		if [ "$(cat "$out.rc")" = 0 ] && [ -n "$total" ] &&
		   ! grep -qE '[1-9][0-9]* (errors|warnings|checks)' <<<"$total"; then
			result "ok $prefix/$n"
		else
			result "FAIL $prefix/$n: ${total:-no report, exit $(cat "$out.rc")}"
			grep -v '^total: ' "$out" | head -n 40 | sed 's/^/    /'
		fi
		i=$((i + 1))
	done
}

KERNEL_CP=
kernel_cp_one() {
	local ign=${KERNEL_IGNORE[$1]:-}
	perl "$KERNEL_CP" --strict --no-tree --show-types --terse -q \
		${ign:+--ignore "$ign"} -f "$1"
}

QEMU_CP=
qemu_cp_one() {
	case $1 in
	*.patch) perl "$QEMU_CP" --strict --no-tree --terse -q "$1" ;;
	*) perl "$QEMU_CP" --strict --no-tree --terse -q -f "$1" ;;
	esac
}

# select_files PREFIX PATHSPEC...: the files whose result name matches T.
select_files() {
	local prefix=$1 f
	shift
	files "$@" | while IFS= read -r f; do
		results_match "$pattern" "$prefix/$f" && echo "$f"
	done
}

# ---- 1. checkpatch on the kernel sources -----------------------------------
mapfile -t kfiles < <(select_files checkpatch 'drivers/*.[ch]' 'include/*.h')
if [ ${#kfiles[@]} -gt 0 ]; then
	if kernel_checkpatch 2>"$tmp/err"; then
		run_parallel kernel_cp_one "${kfiles[@]}"
		checkpatch_results checkpatch "${kfiles[@]}"
	else
		result "FAIL checkpatch: no checkpatch.pl: $(tail -n 1 "$tmp/err")"
	fi
fi

# ---- 2. sparse and W=1 on the Kbuild modules, per kernel line -------------
# kbuild_check NAME KDIR LOG: one result line for a build in KDIR, its
# output in LOG.
kbuild_check() {
	local name=$1 kdir=$2 log=$3 rc mods
	if [ -z "$kdir" ] || [ ! -d "$kdir" ]; then
		result "FAIL $name: no kernel build tree (make deps)"
		return
	elif ! command -v sparse >/dev/null; then
		result "FAIL $name: sparse is not installed (make deps)"
		return
	elif [ ! -f Kbuild ]; then
		result "FAIL $name: no top-level Kbuild"
		return
	fi
	# A fresh copy each run: kbuild would not recompile (nor warn
	# about) files unchanged since the last run.
	rc=0
	rm -rf "$SCRATCH" && mkdir -p "$SCRATCH" &&
		files . | cpio -pdm --quiet "$SCRATCH" >"$log" 2>&1 || rc=$?
	[ "$rc" -eq 0 ] &&
		nice -n 10 make -C "$kdir" M="$top/$SCRATCH" C=2 W=1 -j"$JOBS" \
			modules >"$log" 2>&1 || rc=$?
	# The sparse and compiler diagnostics, and modpost's.
	grep -E ': (warning|error):|^(WARNING|ERROR):' "$log" |
		sed "s|$top/$SCRATCH/||" >"$tmp/warn"
	mods=$(cd "$SCRATCH" && find . -name '*.ko' | sed 's|^\./||' | sort | tr '\n' ' ')
	if [ "$rc" -ne 0 ] || [ -s "$tmp/warn" ] || [ -z "$mods" ]; then
		result "FAIL $name: $(wc -l <"$tmp/warn") warning(s)/error(s), exit $rc${mods:+, built $mods}(log: $log)"
		if [ -s "$tmp/warn" ]; then
			head -n 40 "$tmp/warn"
		else
			tail -n 15 "$log"
		fi | sed 's/^/    /'
	else
		result "ok $name: ${mods% }"
	fi
	# The log is all that is kept: a second copy of the tree under
	# out/ would only confuse greps over the repository.
	rm -rf "$SCRATCH"
}

if [ -n "${KDIR:-}" ]; then
	results_match "$pattern" kbuild/sparse+W=1 && kbuild_check kbuild/sparse+W=1 "$KDIR" "$LOGDIR/kbuild.log"
else
	for line in $(bash scripts/kver.sh --lines); do
		name=kbuild/$line/sparse+W=1
		results_match "$pattern" "$name" || continue
		kdir=
		k=$(bash scripts/kver.sh --line "$line") && kdir=/lib/modules/$k/build
		kbuild_check "$name" "$kdir" "$LOGDIR/kbuild-$line.log"
	done
fi

# ---- 3. QEMU's checkpatch on the model and the patches to QEMU -------------
mapfile -t qfiles < <(select_files qemu-checkpatch 'qemu/*.[ch]' 'patches/qemu/*.patch')
if [ ${#qfiles[@]} -gt 0 ]; then
	if qemu_checkpatch 2>"$tmp/err"; then
		run_parallel qemu_cp_one "${qfiles[@]}"
		checkpatch_results qemu-checkpatch "${qfiles[@]}"
	else
		result "FAIL qemu-checkpatch: no checkpatch.pl: $(tail -n 1 "$tmp/err")"
	fi
fi

results_count "$res"
results_end lint "$pattern"
