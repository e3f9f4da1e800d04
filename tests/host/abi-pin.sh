#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# abi-pin.sh: how the device ABI is pinned, shown on a scratch change. It
# moves one WQE field in a copy of include/ (struct kite_sq_wqe_hdr's
# num_sge from offset 2 to 3, swapped with the reserved byte after it:
# sizes and static_asserts still hold) and builds host tests against it:
#   1. all on the copy: test_abi_layout must fail and name the field (the
#      layout pin: it checks every offset against literal numbers), while
#      test_roce_ops passes: engine and simulator both decode and encode
#      through the header, so a consistent change moves both sides;
#   2. the engine on the copy, the simulator on the real header:
#      test_roce_ops must fail (the engine reads WQEs through the header);
#   3. the simulator on the copy, the engine on the real header: it must
#      fail as well (the simulator writes WQEs through the header).
# Reports one TAP result, case abi_pin (skipped when KITE_CMOCKA_FILTER,
# run-tests.sh's case selection, does not match it); `make -C tests/host
# check` runs it. Builds go to $ABI_PIN_O/abi-pin (default out/host-tests).
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
O=${ABI_PIN_O:-$REPO/out/host-tests}
P=$O/abi-pin
FIELD_MSG='struct kite_sq_wqe_hdr: .num_sge at offset 3, ABI says 2'

CASE=abi_pin
# shellcheck disable=SC2053 # the filter is a glob
if [ -n "${KITE_CMOCKA_FILTER:-}" ] && [[ $CASE != $KITE_CMOCKA_FILTER ]]; then
	echo "1..0"
	exit 0
fi
echo "1..1"
fail() {
	echo "not ok 1 - $CASE"
	echo "# $*"
	exit 1
}

rm -rf "$P"
mkdir -p "$P" || fail "cannot create $P"
# The copy goes when done, so that no second kite_hw.h lingers in out/.
trap 'rm -rf "$P/include"' EXIT
cp -r "$REPO/include" "$P/include" || fail "cannot copy include/"
HW=$P/include/kite/kite_hw.h
awk '
	/^struct kite_sq_wqe_hdr \{/ { inside = 1 }
	inside && /__u8 num_sge;/ { held = $0; next }
	inside && held != "" && /__u8 reserved;/ {
		print; print held; held = ""; inside = 0; next
	}
	{ print }
' "$REPO/include/kite/kite_hw.h" > "$HW" || fail "cannot edit the copy"
changed=$(diff "$REPO/include/kite/kite_hw.h" "$HW" | grep '^[<>]')
if [ "$(grep -c . <<<"$changed")" -ne 2 ] ||
	[ "$(grep -c 'num_sge;' <<<"$changed")" -ne 2 ]; then
	fail "the scratch edit did not move exactly num_sge"
fi
echo "# scratch header: kite_sq_wqe_hdr.num_sge and .reserved swapped"

# build NAME TESTS_INCLUDE ENGINE_INCLUDE ENGINE_O TARGET...
build() {
	local name=$1 inc=$2 einc=$3 eo=$4 t
	shift 4
	local targets=()
	for t in "$@"; do
		targets+=("$P/$name/$t")
	done
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory \
		-C "$HERE" O="$P/$name" KITE_INCLUDE="$inc" \
		ENGINE_INCLUDE="$einc" ENGINE_O="$eo" "${targets[@]}" \
		> "$P/$name.build.log" 2>&1 ||
		fail "$name: build failed (log: $P/$name.build.log)"
}

# run NAME TEST: runs it, output in $P/NAME.TEST.log; status of the test.
run() {
	CMOCKA_MESSAGE_OUTPUT=TAP timeout 300 "$P/$1/$2" > "$P/$1.$2.log" 2>&1
}

# Must fail by failing cases (not by crashing or not starting).
must_fail() {
	if run "$1" "$2"; then
		fail "$1: $2 passed against the moved field"
	fi
	grep -q '^not ok' "$P/$1.$2.log" ||
		fail "$1: $2 did not report a failed case (log: $P/$1.$2.log)"
	echo "# $1: $2 fails:$(grep '^not ok' "$P/$1.$2.log" |
		sed 's/^not ok [0-9]* - / /' | tr -d '\n')"
}

build both "$P/include" "$P/include" "$P/both/engine" \
	test_abi_layout test_roce_ops
must_fail both test_abi_layout
grep -qF "$FIELD_MSG" "$P/both.test_abi_layout.log" ||
	fail "both: test_abi_layout does not name the moved field"
echo "# both: test_abi_layout says: $FIELD_MSG"
run both test_roce_ops ||
	fail "both: test_roce_ops failed with engine and simulator on one header (log: $P/both.test_roce_ops.log)"
echo "# both: test_roce_ops passes (engine and simulator moved together)"

build engine "$REPO/include" "$P/include" "$P/both/engine" test_roce_ops
must_fail engine test_roce_ops

build harness "$P/include" "$REPO/include" "$P/harness/engine" test_roce_ops
must_fail harness test_roce_ops

echo "# a moved WQE field fails the layout pin and splits engine from simulator"
echo "ok 1 - $CASE"
