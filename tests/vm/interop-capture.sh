# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash disable=SC2034
# Part "capture" of the interop group (sourced by interop.sh, which sets
# KIND, DEV, GIDX, GIDX6, ME, PEER and defines pt, pp and host_call).
# Guest a (Kite) has the host capture the link (QEMU filter-dump on its
# netdev: interop.hook dump-start / dump-stop) while a small workload runs
# between Kite and rxe at path MTU 1024:
#   ib_write_bw and ib_read_bw, 6000-byte messages (six packets, the last
#   one short), Kite as client (requester) and as server; then
#   ibv_rc_pingpong -c over IPv6 GIDs (3000-byte SENDs), both ways.
# The host then judges the capture (interop.hook check, which runs
# tests/capture/check-capture.sh: tshark and kite-pcap, the project's own
# ICRC code) and guest a prints one result per check:
#   capture-tshark       tshark: no malformed frame or expert error, every
#                        UDP/4791 frame dissected as RoCEv2
#   capture-icrc         every RoCEv2 frame (Kite's and rxe's) is well formed
#                        with a valid ICRC
#   capture-kite-frames  every UDP/4791 frame from Kite is valid RoCEv2
#   capture-read-seq     READ request, READ RESPONSE FIRST/MIDDLE/LAST as the
#                        rules require, Kite and rxe as requester
#   capture-write-seq    WRITE FIRST/MIDDLE/LAST then an ACK, both ways
#   capture-opcodes      tshark's opcodes, QPs and PSNs equal kite-pcap's
# The capture (out/logs/interop/interop-capture.pcap, about 3 MB) and the
# checker's outputs (.check, .pcap.frames, .pcap.tshark) stay in the logs.
CAP_NAME=interop-capture
CAP_CHECKS="tshark icrc kite-frames read-seq write-seq opcodes"
CAP_PMTU=1024
CAP_SIZE=6000
# a: dump-start, 4 perftest runs, 2 pingpong runs, dump-stop, 6 checks;
# b: the 6 runs.
if [ "$KITE_VM" = a ]; then n_capture=14; else n_capture=6; fi

# cap_host NAME ACTION ARGS...: one host action (host_call) as result NAME.
cap_host() {
	local name="$1"
	shift
	if host_call "$@"; then ok "$name"; else fail "$name" "$HOST_ANS"; fi
}

run_capture() {
	local port=18900 tool c mac save
	[ "$KITE_VM" = a ] && cap_host capture-dump-start dump-start $CAP_NAME
	for tool in ib_write_bw ib_read_bw; do
		# shellcheck disable=SC2086 # options
		if [ "$KITE_VM" = a ]; then
			pt cap-$tool client $port $tool -d $DEV -x $GIDX -m $CAP_PMTU -F --use_old_post_send -s $CAP_SIZE -n 100
			pt cap-$tool server $((port + 1)) $tool -d $DEV -x $GIDX -m $CAP_PMTU -F --use_old_post_send -s $CAP_SIZE -n 100
		else
			pt cap-$tool server $port $tool -d $DEV -x $GIDX -m $CAP_PMTU -F --use_old_post_send -s $CAP_SIZE -n 100
			pt cap-$tool client $((port + 1)) $tool -d $DEV -x $GIDX -m $CAP_PMTU -F --use_old_post_send -s $CAP_SIZE -n 100
		fi
		port=$((port + 2))
	done
	if [ "$KITE_VM" = a ]; then
		pp cap-v6 client "$GIDX6" -m $CAP_PMTU -s 3000 -n 20
		pp cap-v6 server "$GIDX6" -m $CAP_PMTU -s 3000 -n 20
	else
		pp cap-v6 server "$GIDX6" -m $CAP_PMTU -s 3000 -n 20
		pp cap-v6 client "$GIDX6" -m $CAP_PMTU -s 3000 -n 20
		return 0
	fi
	cap_host capture-dump-stop dump-stop $CAP_NAME
	# The first check runs tshark and kite-pcap over the whole capture.
	mac=$(cat "/sys/class/net/$NETDEV/address" 2>/dev/null)
	save=${HOST_CALL_SECS:-}
	HOST_CALL_SECS=300
	for c in $CAP_CHECKS; do
		cap_host "capture-$c" check $CAP_NAME "$c" $CAP_PMTU "$mac"
	done
	HOST_CALL_SECS=$save
}
