# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2086,SC2154 # single words; DEV_kk etc. come from pair-rdma.sh
# The soak, sourced by pair-a.sh and pair-b.sh after pair-rdma.sh when
# SOAK_SECS is set (run.sh: a short one in pair-6.12, the hour of
# `make soak` in the soak group). It uses pair-rdma.sh's two links (kk:
# Kite<->Kite; kr: rxe on a's virtio-net NIC <-> b's second Kite NIC) and
# b's agent. For SOAK_SECS seconds guest a runs rounds of:
#   - kite-rc mixed (SENDs, RDMA WRITEs and READs of 1 B to 1 MiB, every
#     byte and completion verified) on both links at once, SOAK_N messages
#     on kk and SOAK_KR_N on kr, a new QP pair per run (so QPs, CQs and MRs are created and
#     destroyed throughout); while they run, every SOAK_FLAP_EVERY seconds
#     one link goes down for SOAK_FLAP_DOWN seconds (kk and kr in turn:
#     a's n0, b's n2);
#   - kite-rc func on kk (every RC opcode, both atomics included, and the
#     error completions);
# with Kite's wire fault injection dropping, duplicating and reordering
# SOAK_PPM parts per million of the RoCEv2 frames each Kite NIC sends, and
# dropping as many of those b's kr NIC receives from rxe.
# Results (a; SOAK_A_N): soak-faults-on, soak-kk-mixed, soak-kr-mixed,
# soak-kk-func (every run of each passed), soak-link-flaps (every flap
# done, at least one), soak-faults-seen (Kite's wire_dropped grew),
# soak-faults-off, soak-qemu-rss (QEMU's resident memory outside the
# guest's RAM and TCG's code buffer) and soak-slab (growth after the first round within
# SOAK_RSS_KB and SOAK_SLAB_KB). "# soak:" lines give the
# figures: rounds, messages, bytes, retransmits, timeouts, link flaps, RSS
# and slab before and after.
SOAK_SECS=${SOAK_SECS:-0}
SOAK_N=${SOAK_N:-300}
# rxe recovers a lost frame only by its retransmission timer: fewer
# messages on kr keep a round's two runs about as long.
SOAK_KR_N=${SOAK_KR_N:-100}
SOAK_PPM=${SOAK_PPM:-10000}
SOAK_FLAP_EVERY=${SOAK_FLAP_EVERY:-180}
SOAK_FLAP_DOWN=${SOAK_FLAP_DOWN:-2}
# Local ACK timeout exponent of the requesters (kite-rc -T), so that 7
# retries outlast a flap: kk 4.096 us << 18 = 1.07 s (Kite retransmits
# early on its own RTT estimate), kr 537 ms (rxe waits out every loss).
SOAK_QP_TIMEOUT=${SOAK_QP_TIMEOUT:-18}
SOAK_KR_QP_TIMEOUT=${SOAK_KR_QP_TIMEOUT:-17}
# Each kite-rc run is bounded by this many seconds.
# (b's agent stops its servers after its RUN_TIMEOUT, 240 s.)
SOAK_RUN_SECS=${SOAK_RUN_SECS:-200}
SOAK_RSS_KB=${SOAK_RSS_KB:-65536}
SOAK_SLAB_KB=${SOAK_SLAB_KB:-16384}
SOAK_A_N=0
if [ "$SOAK_SECS" -gt 0 ]; then
	# shellcheck disable=SC2034 # read by pair-a.sh
	SOAK_A_N=9
fi
SOAK_PORT=18900

soak_peer() { case $1 in kk) echo $PR_KK_B ;; kr) echo $PR_KR_B ;; esac; }
soak_cnt() { cat /sys/class/infiniband/$1/ports/1/hw_counters/$2 2>/dev/null || echo 0; }
soak_slab() { awk '/^Slab:/ { print $2 }' /proc/meminfo; }

# What b's kite1 sends to a's rxe (the kr requester) is dropped, and on
# 6.1 also duplicated and reordered. From 6.12 on (seen there, not on 6.1)
# rxe's completer takes a stale ACK that arrives while a READ's responses
# are partly in for the end of that response (check_psn hands an
# ACKNOWLEDGE older than comp.psn to check_ack after a FIRST or MIDDLE;
# the ACK's END bit resets comp.opcode): the next READ_RESPONSE_MIDDLE
# fails the sequence check with the WQE's status still success, which
# WARNs in rxe_completer and completes the READ successfully with only
# its first packets placed. Duplicates and reordering make such stale ACKs.
case $(uname -r) in
6.1.*) SOAK_KR_REORDER=1 ;;
*) SOAK_KR_REORDER=0 ;;
esac

# soak_faults PPM: the fault rates of every Kite NIC on the two links.
soak_faults() {
	local p kr
	for p in x-wire-drop-ppm x-wire-dup-ppm x-wire-reorder-ppm; do
		kr=$1
		[ $p = x-wire-drop-ppm ] || [ $SOAK_KR_REORDER -eq 1 ] || kr=0
		host_call qom a kite0 $p $1 && host_call qom b kite0 $p $1 &&
			host_call qom b kite1 $p $kr || return 1
	done
	host_call qom b kite1 x-wire-rx-drop-ppm $1
}

# soak_rss: SOAK_RSS="a=KB b=KB tcg-code=a:KB/b:KB", the two QEMUs'
# resident memory outside the guests' RAM and TCG's code buffer, then
# that buffer's (from the hook). Like every host_call, not inside $(...)
# or a redirection: the request goes out on the console.
soak_rss() {
	host_call rss || return 1
	SOAK_RSS=$HOST_ANS
}

# soak_mixed_start TAG PORT SEED: b's server through the agent, a's client
# in the background (its pid in SOAK_PID_TAG, its output in /tmp/soak.PORT).
soak_mixed_start() {
	local tag=$1 port=$2 seed=$3 peer ans n=$SOAK_N to=$SOAK_QP_TIMEOUT
	peer=$(soak_peer $tag)
	[ $tag = kr ] && n=$SOAK_KR_N to=$SOAK_KR_QP_TIMEOUT
	ans=$(agent_call $peer 30 "START $port kite-rc -d \$DEV_$tag -g \$GIDX_$tag -p $port -t $SOAK_RUN_SECS -n $n -S $seed mixed")
	case $ans in
	READY*) ;;
	*) echo "soak $tag round seed $seed: server did not start: ${ans:-no answer}" >/tmp/soak.$port
		soak_diag $tag
		eval "SOAK_PID_$tag=" ; return 1 ;;
	esac
	eval "timeout $((SOAK_RUN_SECS + 20)) kite-rc -d \$DEV_$tag -g \$GIDX_$tag -p $port \
		-t $SOAK_RUN_SECS -n $n -S $seed -T $to -P soak-$tag mixed $peer" \
		>/tmp/soak.$port 2>&1 &
	eval "SOAK_PID_$tag=$!"
}

# soak_diag TAG: after a failed run, what both ends hold, as info lines:
# the QPs, the kite-rc processes with their state and kernel stack, the
# device's non-zero counters, addresses, neighbours and link counters and
# the kernel log's tail, on a and on b
# (both write /tmp/soak-diag.sh when they source this file, with lib.sh's
# tool paths).
printf 'RDMA=%s IP=%s\n' "$RDMA" "$IP" >/tmp/soak-diag.sh
cat >>/tmp/soak-diag.sh <<'EOF'
d=$1
$RDMA res show qp link $d/1 2>&1 | grep -v ' state RESET'
ps -o pid,stat,args | grep '[k]ite-rc'
for p in $(pidof kite-rc); do
	echo "$p: $(cat /proc/$p/wchan 2>/dev/null) $(head -n 6 /proc/$p/stack 2>/dev/null | tr '\n' ' ')"
done
grep . /sys/class/infiniband/$d/ports/1/hw_counters/* 2>/dev/null | sed 's|.*/||' | grep -v ':0$' | tr '\n' ' '
echo
$IP -br addr
$IP neigh
$IP -s -o link | sed 's/  */ /g'
dmesg | tail -n 6
EOF
soak_diag() {
	local tag=$1 dev ans
	eval "dev=\$DEV_$tag"
	sh /tmp/soak-diag.sh "$dev" 2>&1 | sed "s/^/info: soak diag a ($tag): /"
	ans=$(agent_call $(soak_peer $tag) 20 "SH - sh /tmp/soak-diag.sh \$DEV_$tag")
	echo "${ans:-no answer from the agent on b}" | sed "s/^/info: soak diag b ($tag): /"
}

# soak_mixed_end TAG PORT: wait for the run; 0 when client and server
# passed. Adds its messages and bytes to SOAK_MSGS and SOAK_BYTES.
soak_mixed_end() {
	local tag=$1 port=$2 pid rc src peer line
	eval "pid=\$SOAK_PID_$tag"
	peer=$(soak_peer $tag)
	[ -n "$pid" ] || { echo "info: $(cat /tmp/soak.$port)"; return 1; }
	wait $pid
	rc=$?
	# A failed client leaves its server waiting: give it 5 s, then stop it
	# (once stopped it ends at once: its WAIT has 30 s).
	if [ $rc -eq 0 ]; then
		agent_call $peer $((SOAK_RUN_SECS + 30)) "WAIT $port" >/tmp/soak-srv.$port
	else
		sleep 5
		soak_diag $tag
		agent_call $peer 30 "KILL $port" >/dev/null
		agent_call $peer 30 "WAIT $port" >/tmp/soak-srv.$port
	fi
	src=$(head -n 1 /tmp/soak-srv.$port)
	line=$(grep -m 1 'mixed client: [0-9]* of [0-9]* messages' /tmp/soak.$port)
	# shellcheck disable=SC2046 # two numbers
	set -- $(echo "$line" | sed -n 's/.*client: \([0-9]*\) of .* batches, \([0-9]*\) bytes.*/\1 \2/p')
	SOAK_MSGS=$((SOAK_MSGS + ${1:-0}))
	SOAK_BYTES=$((SOAK_BYTES + ${2:-0}))
	if [ $rc -eq 0 ] && [ "$src" = "RC 0" ] && grep -q "^ok soak-$tag-mixed" /tmp/soak.$port; then
		return 0
	fi
	echo "info: soak $tag run on port $port: client exit $rc, server ${src:-no answer}:" \
		"$(grep -E '^FAIL|error|fail' /tmp/soak.$port /tmp/soak-srv.$port | head -n 3 | tr '\n' ' ')"
	return 1
}

# soak_func PORT: one kite-rc func run on kk; 0 when every one of its
# checks passed and both sides exited 0.
soak_func() {
	local port=$1 ans rc src n lost
	ans=$(agent_call $PR_KK_B 30 "START $port kite-rc -d \$DEV_kk -g \$GIDX_kk -p $port -t $SOAK_RUN_SECS func")
	case $ans in
	READY*) ;;
	*) echo "info: soak func: server did not start: ${ans:-no answer}"; return 1 ;;
	esac
	timeout $((SOAK_RUN_SECS + 20)) kite-rc -d $DEV_kk -g $GIDX_kk -p $port -t $SOAK_RUN_SECS \
		-P soak-func func $PR_KK_B >/tmp/soak-func.$port 2>&1
	rc=$?
	[ $rc -eq 0 ] || { sleep 5; agent_call $PR_KK_B 30 "KILL $port" >/dev/null; }
	agent_call $PR_KK_B $((SOAK_RUN_SECS + 30)) "WAIT $port" >/tmp/soak-fsrv.$port
	src=$(head -n 1 /tmp/soak-fsrv.$port)
	n=$(grep -c '^ok ' /tmp/soak-func.$port)
	[ $rc -eq 0 ] && [ "$src" = "RC 0" ] && [ "$n" -eq "$(kite-rc count func)" ] && return 0
	# A remote access error is one NAK, after which the responder's QP is
	# in the error state and answers nothing more: when the fault injection
	# drops that NAK, the requester's retries run out. That outcome of
	# such a check, and nothing else, is the loss, not a defect.
	lost=$(grep -c '^FAIL .*got wr_id [0-9]* status transport retry counter exceeded .*want wr_id [0-9]* status remote access error' \
		/tmp/soak-func.$port)
	if [ $rc -eq 1 ] && [ "$src" = "RC 0" ] && [ "$lost" -gt 0 ] &&
		[ $((n + lost)) -eq "$(kite-rc count func)" ]; then
		SOAK_LOST_NAKS=$((SOAK_LOST_NAKS + lost))
		echo "info: soak func on port $port: $lost remote access error NAK(s) lost: $(grep '^FAIL' /tmp/soak-func.$port | cut -c1-160 | tr '\n' ' ')"
		return 0
	fi
	echo "info: soak func on port $port: client exit $rc, server ${src:-no answer}, $n ok:" \
		"$(grep -E '^FAIL' /tmp/soak-func.$port | head -n 3 | tr '\n' ' ')"
	return 1
}

# soak_flap: one link down for SOAK_FLAP_DOWN seconds, then up (kk and kr
# in turn); 0 when both requests were done.
soak_flap() {
	local g nd
	if [ $((SOAK_FLAPS % 2)) -eq 0 ]; then g=a nd=n0; else g=b nd=n2; fi
	SOAK_FLAPS=$((SOAK_FLAPS + 1))
	host_call link $g off $nd || return 1
	sleep $SOAK_FLAP_DOWN
	host_call link $g on $nd
}

soak_a() {
	local end now next_flap round=0 port seed kk_bad=0 kr_bad=0 func_bad=0
	local flap_bad=0 flap_why= rss0 rss1 slab0 slab1 bslab0 bslab1 drop0 drop1 t0 why
	SOAK_MSGS=0 SOAK_BYTES=0 SOAK_FLAPS=0 SOAK_LOST_NAKS=0
	# The hook's answers come on the second serial port (host_call).
	host_listen
	t0=$(date +%s)
	end=$((t0 + SOAK_SECS))
	next_flap=$((t0 + SOAK_FLAP_EVERY < end ? t0 + SOAK_FLAP_EVERY : t0 + 5))
	drop0=$(( $(soak_cnt $DEV_kk wire_dropped) + $(soak_cnt $DEV_kr wire_dropped) ))
	[ $SOAK_KR_REORDER -eq 1 ] ||
		echo "info: soak: $(uname -r): b's kite1 only drops what it sends to rxe (rxe's stale-ACK defect, soak.sh)"
	if soak_faults $SOAK_PPM; then ok soak-faults-on; else
		fail soak-faults-on "the host hook could not set the fault rates: $HOST_ANS"
	fi
	while [ "$(date +%s)" -lt $end ] || [ $round -eq 0 ]; do
		round=$((round + 1))
		port=$((SOAK_PORT + 2 * (round % 40)))
		seed=$((1000 + round))
		soak_mixed_start kk $port $seed
		soak_mixed_start kr $((port + 1)) $seed
		now=$(date +%s)
		if [ "$now" -ge $next_flap ]; then
			sleep 3
			soak_flap || { flap_bad=$((flap_bad + 1)); flap_why=$HOST_ANS; }
			next_flap=$((now + SOAK_FLAP_EVERY))
		fi
		soak_mixed_end kk $port || kk_bad=$((kk_bad + 1))
		soak_mixed_end kr $((port + 1)) || kr_bad=$((kr_bad + 1))
		# The atomics and error completions, on kk.
		soak_func $((SOAK_PORT + 80 + round % 10)) || func_bad=$((func_bad + 1))
		# After the first round: the baseline of the memory checks.
		if [ $round -eq 1 ]; then
			soak_rss && rss0=$SOAK_RSS
			slab0=$(soak_slab)
			bslab0=$(agent_call $PR_KK_B 30 "SH - awk '/^Slab:/ { print \$2 }' /proc/meminfo" | sed -n 2p)
		fi
		echo "# soak: round $round done at $(($(date +%s) - t0)) s: $SOAK_MSGS messages, $SOAK_BYTES bytes, bad kk $kk_bad kr $kr_bad func $func_bad, flaps $SOAK_FLAPS"
	done
	soak_rss && rss1=$SOAK_RSS
	slab1=$(soak_slab)
	bslab1=$(agent_call $PR_KK_B 30 "SH - awk '/^Slab:/ { print \$2 }' /proc/meminfo" | sed -n 2p)
	drop1=$(( $(soak_cnt $DEV_kk wire_dropped) + $(soak_cnt $DEV_kr wire_dropped) ))
	echo "# soak: $round rounds in $(($(date +%s) - t0)) s: $SOAK_MSGS messages, $SOAK_BYTES bytes verified; $SOAK_FLAPS link flaps; $SOAK_LOST_NAKS func check(s) whose remote access error NAK was lost"
	echo "# soak: a's $DEV_kk retransmits $(soak_cnt $DEV_kk retransmits) timeouts $(soak_cnt $DEV_kk timeouts); a's rxe (kr) is the other end of b's kite1"
	echo "# soak: wire_dropped on a $drop0 -> $drop1; QEMU RSS outside guest RAM (kB) ${rss0:-?} -> ${rss1:-?}; slab (kB) a ${slab0:-?} -> ${slab1:-?}, b ${bslab0:-?} -> ${bslab1:-?}"
	if [ $kk_bad -eq 0 ]; then ok soak-kk-mixed; else fail soak-kk-mixed "$kk_bad of $round runs failed (see the info lines)"; fi
	if [ $kr_bad -eq 0 ]; then ok soak-kr-mixed; else fail soak-kr-mixed "$kr_bad of $round runs failed (see the info lines)"; fi
	if [ $func_bad -eq 0 ]; then ok soak-kk-func; else fail soak-kk-func "$func_bad of $round runs failed (see the info lines)"; fi
	if [ $flap_bad -eq 0 ] && [ $SOAK_FLAPS -gt 0 ]; then ok soak-link-flaps; else
		fail soak-link-flaps "$SOAK_FLAPS flaps, $flap_bad not done: ${flap_why:-}"
	fi
	# Only a's devices count: its kite0 drops what it sends; the frames
	# b's NICs drop show in b's counters.
	if [ "$drop1" -gt "$drop0" ]; then ok soak-faults-seen; else
		fail soak-faults-seen "a's wire_dropped did not move ($drop0 -> $drop1): no loss was injected"
	fi
	if soak_faults 0; then ok soak-faults-off; else
		fail soak-faults-off "the host hook could not reset the fault rates: $HOST_ANS"
	fi
	# The hook has nothing more to do (it must end before the guests do).
	host_call end || echo "info: the host hook did not answer 'end'"
	why=$(soak_grew "$rss0" "$rss1" $SOAK_RSS_KB)
	if [ -z "$why" ]; then ok soak-qemu-rss; else fail soak-qemu-rss "$why"; fi
	why=$(soak_grew "a=$slab0 b=$bslab0" "a=$slab1 b=$bslab1" $SOAK_SLAB_KB)
	if [ -z "$why" ]; then ok soak-slab; else fail soak-slab "$why"; fi
}

# soak_grew "a=KB b=KB" "a=KB b=KB" LIMIT: prints what grew by more than
# LIMIT kB (or what is missing); nothing when all stayed within it.
soak_grew() {
	local g v0 v1
	for g in a b; do
		v0=$(echo "$1" | sed -n "s/.*$g=\([0-9][0-9]*\).*/\1/p")
		v1=$(echo "$2" | sed -n "s/.*$g=\([0-9][0-9]*\).*/\1/p")
		if [ -z "$v0" ] || [ -z "$v1" ]; then
			echo "$g: no figures ('$1' -> '$2')"
		elif [ $((v1 - v0)) -gt "$3" ]; then
			echo "$g: $v0 -> $v1 kB, more than $3 kB"
		fi
	done
}
