#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# check-capture.sh [-p PMTU] [-n MIN] PCAP KITE_MAC: judge a capture of the
# link between a Kite NIC (source MAC KITE_MAC) and a peer (Soft-RoCE) with
# Debian's tshark and with kite-pcap (tests/capture/kite-pcap.c, the
# project's own codec and ICRC code). One result line per check, in the
# tests/vm format ("ok NAME" | "FAIL NAME: DETAIL"), each followed by a
# "# NAME: summary" line:
#   tshark       tshark decodes every frame: no malformed frame, no expert
#                error; every UDP/4791 frame is dissected as InfiniBand
#                (RoCEv2), as many as kite-pcap counts
#   icrc         every UDP/4791 frame is a well-formed RoCEv2 frame with a
#                valid ICRC (Kite's and the peer's)
#   kite-frames  Kite sent UDP/4791 frames, every one valid RoCEv2
#   read-seq     every RDMA READ (Kite and the peer as requester) answered
#                by READ RESPONSE FIRST, MIDDLE..., LAST (ONLY when it fits
#                one PMTU), PSNs consecutive from the request's, PMTU-sized
#                but the last, AETH on FIRST/LAST/ONLY, RETH length in all;
#                at least MIN multi-packet READs from each side
#   write-seq    every RDMA WRITE: FIRST (RETH), MIDDLE..., LAST, PSNs
#                consecutive, PMTU-sized but the last, RETH length in all,
#                then an ACK covering the last PSN; MIN from each side
#   opcodes      tshark's BTH opcode, destination QP and PSN of every
#                RoCEv2 frame equal kite-pcap's
# -p: path MTU of the workload (default 1024); -n: multi-packet messages
# needed per side and kind (default 1). The last line is
# "capture: N passed, N failed"; exit status 1 when a check failed, 2 on
# a usage error. Full outputs are kept next to PCAP (PCAP.frames: one line
# per frame from kite-pcap, PCAP.tshark: tshark's fields).
#
# tshark (4.0 in bookworm) dissects UDP port 4791 as RoCEv2 through its
# "infiniband.rroce.port" preference, 4791 by default; it is given
# explicitly so that no preference file can change it. RoCEv2 over IPv6
# is sent with UDP checksum 0 (rxe does, Kite does; RFC 6935/6936 allow it
# for tunnels, the ICRC covers the packet); tshark flags that as an expert
# error ("Illegal checksum value (0)") unless udp.ignore_ipv6_zero_checksum
# is set, which it is here; such frames are counted in the summary.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/lib/results.sh
. "$top/scripts/lib/results.sh"
tool=${KITE_PCAP_TOOL:-$top/out/capture/kite-pcap}
pmtu=1024 min=1
while getopts "p:n:" o; do
	case $o in
	p) pmtu=$OPTARG ;;
	n) min=$OPTARG ;;
	*) echo "usage: $0 [-p PMTU] [-n MIN] PCAP KITE_MAC" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || { echo "usage: $0 [-p PMTU] [-n MIN] PCAP KITE_MAC" >&2; exit 2; }
pcap=$1 mac=$2

pass=0 fail=0
oneline() { echo "$1" | tr '\n' ' ' | sed 's/[; ]*$//' | cut -c1-400; }
# res NAME OK(0/1) SUMMARY: one result and its summary line.
res() {
	if [ "$2" = 0 ]; then
		echo "ok $1"
		pass=$((pass + 1))
	else
		echo "FAIL $1: $(oneline "$3")"
		fail=$((fail + 1))
	fi
	echo "# $1: $(oneline "$3")"
}
names="tshark icrc kite-frames read-seq write-seq opcodes"
# all_fail WHY: every check fails for one reason (nothing could be judged).
all_fail() {
	local n
	for n in $names; do res "$n" 1 "$1"; done
	results_line capture "$pass" "$fail"
	exit 1
}

[ -r "$pcap" ] || all_fail "no capture file $pcap"
if [ ! -x "$tool" ] || [ "$top/tests/host/roce_pcap.c" -nt "$tool" ] ||
	[ "$top/tests/host/roce_pcap_seq.c" -nt "$tool" ] ||
	[ "$top/qemu/roce/kite_roce_pkt.c" -nt "$tool" ] ||
	[ "$top/qemu/roce/kite_roce_crc.c" -nt "$tool" ] || [ "$top/tests/capture/kite-pcap.c" -nt "$tool" ]; then
	make -s -C "$top/tests/capture" >/dev/null 2>&1 || all_fail "cannot build $tool (make -C tests/capture)"
fi
command -v tshark >/dev/null || all_fail "tshark is not installed (scripts/install-deps.sh)"

# ---- kite-pcap: per-frame lines, totals and the results -------------------
frames=$pcap.frames
"$tool" -m "$mac" -r -w -p "$pmtu" -n "$min" "$pcap" >"$frames" 2>&1
trc=$?
[ $trc -le 1 ] || all_fail "kite-pcap: $(tail -n 2 "$frames")"
# tool_result NAME: "ok|FAIL DETAIL" of kite-pcap's result line NAME.
tool_result() { sed -n "s/^result $1 //p" "$frames" | head -n 1; }

# ---- tshark --------------------------------------------------------------
TS=(tshark -n -o infiniband.rroce.port:4791 -o udp.ignore_ipv6_zero_checksum:TRUE -r "$pcap")
ver=$(tshark --version 2>/dev/null | sed -n 's/^TShark (Wireshark) \([^ ]*\).*/\1/p')
fields=$pcap.tshark
if ! "${TS[@]}" -T fields -E separator=/t -e frame.number -e frame.protocols \
	-e udp.dstport -e infiniband.bth.opcode -e infiniband.bth.destqp \
	-e infiniband.bth.psn -e ipv6.src -e udp.checksum >"$fields" 2>"$fields.err"; then
	res tshark 1 "tshark $ver could not read $pcap: $(tail -n 2 "$fields.err")"
	tshark_ok=0
else
	tshark_ok=1
	bad=$("${TS[@]}" -Y '_ws.malformed || _ws.expert.severity >= 0x00800000' \
		-T fields -e frame.number -e _ws.expert.message 2>/dev/null)
	nbad=$(printf '%s' "$bad" | grep -c .)
	nwarn=$("${TS[@]}" -Y '_ws.expert.severity == 0x00600000' 2>/dev/null | grep -c .)
	total=$(grep -c . "$fields")
	# UDP/4791 frames, and those of them not dissected as InfiniBand.
	# (and those over IPv6 with UDP checksum 0).
	read -r n4791 notib zero6 < <(awk -F'\t' '
		$3 ~ /(^|,)4791(,|$)/ {
			n++
			if ($2 !~ /:infiniband(:|$)/) bad++
			if ($7 != "" && $8 == "0x0000") z++
		}
		END { printf "%d %d %d\n", n, bad, z }' "$fields")
	ttotal=$(sed -n 's/^totals: \([0-9]*\) frames.* \([0-9]*\) UDP\/4791:.*/\1 \2/p' "$frames")
	sum="tshark $ver: $total frames, $n4791 to UDP 4791, $((n4791 - notib)) of them dissected as InfiniBand (RoCEv2) ($zero6 over IPv6 with UDP checksum 0); $nbad malformed or with expert errors, $nwarn with warnings"
	if [ "$nbad" -gt 0 ]; then
		res tshark 1 "$sum; first: $(echo "$bad" | head -n 3 | tr '\t\n' ' ;')"
	elif [ "$notib" -gt 0 ] || [ "$n4791" -eq 0 ]; then
		res tshark 1 "$sum"
	elif [ "$ttotal" != "$total $n4791" ]; then
		res tshark 1 "$sum; kite-pcap counts '$ttotal' (frames, UDP/4791)"
	else
		res tshark 0 "$sum"
	fi
fi

# ---- kite-pcap's verdicts ---------------------------------------------------
for n in icrc kite-frames read-seq write-seq; do
	r=$(tool_result "$n")
	case $r in
	ok\ *) res "$n" 0 "${r#ok }" ;;
	FAIL\ *)
		# The first lines that say which message broke which rule.
		why=$(grep -m 3 "^$n: " "$frames" | tr '\n' ' ')
		res "$n" 1 "${r#FAIL }${why:+; $why}"
		;;
	*) res "$n" 1 "kite-pcap printed no $n result: $(tail -n 2 "$frames")" ;;
	esac
done

# ---- opcodes: tshark against kite-pcap, frame by frame -------------------
if [ "$tshark_ok" = 1 ]; then
	# frame op qp psn from both, numbers in decimal.
	diffs=$(awk -F'\t' '
		function hex(s,   i, c, v) {
			s = tolower(s); sub(/^0x/, "", s); v = 0
			for (i = 1; i <= length(s); i++) {
				c = index("0123456789abcdef", substr(s, i, 1))
				if (!c) return -1
				v = v * 16 + c - 1
			}
			return v
		}
		FNR == NR {
			if ($3 ~ /(^|,)4791(,|$)/ && $2 ~ /:infiniband(:|$)/)
				ts[$1] = ($4 + 0) " " hex($5) " " ($6 + 0)
			next
		}
		/^frame [0-9]+ src .* op 0x/ {
			split($0, w, " ")
			for (i = 1; i in w; i++) {
				if (w[i] == "op") op = hex(w[i + 1])
				if (w[i] == "qp") qp = hex(w[i + 1])
				if (w[i] == "psn") psn = w[i + 1] + 0
			}
			mine[w[2]] = op " " qp " " psn
		}
		END {
			for (f in ts) {
				n++
				if (!(f in mine)) { bad++; if (bad <= 3) printf "frame %s: tshark %s, kite-pcap none; ", f, ts[f] }
				else if (ts[f] != mine[f]) { bad++; if (bad <= 3) printf "frame %s: tshark %s, kite-pcap %s; ", f, ts[f], mine[f] }
			}
			for (f in mine) if (!(f in ts)) { bad++; if (bad <= 3) printf "frame %s: kite-pcap only; ", f }
			printf "\n%d %d\n", n, bad
		}' "$fields" "$frames")
	read -r ncmp nbad < <(echo "$diffs" | tail -n 1)
	detail=$(echo "$diffs" | head -n 1)
	# Opcodes seen, with counts, from tshark (e.g. 12=ReadRequest x4).
	ops=$(awk -F'\t' '$3 ~ /(^|,)4791(,|$)/ { c[$4]++ } END { for (o in c) printf "%s:%d\n", o, c[o] }' "$fields" |
		sort -n | tr '\n' ' ' | sed 's/ $//')
	if [ "${ncmp:-0}" -gt 0 ] && [ "${nbad:-1}" -eq 0 ]; then
		res opcodes 0 "$ncmp RoCEv2 frames: opcode, QP and PSN the same in tshark and kite-pcap (opcode:count $ops)"
	else
		res opcodes 1 "${ncmp:-0} frames compared, ${nbad:-?} differ: $detail"
	fi
else
	res opcodes 1 "tshark could not read the capture"
fi

results_line capture "$pass" "$fail"
[ "$fail" -eq 0 ]
