# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2086 # DEV, PEER, ME: single words
# Open MPI between the two guests of the RDMA groups (sourced by rdma-a.sh
# after rdma-ucx.sh): Debian 12's openmpi-bin 4.1 with its UCX PML, the
# launcher dropbear (guest b's sshd, guest a's dbclient as mpirun's rsh
# agent), and tests/vm/kite-mpi.c as the program: rank 0 on a, rank 1 on b.
# The keys are made here at test time: a's client key, b's host key
# (the guests are fresh each boot, so b's host key is not checked: -yy).
# Debian's /etc/openmpi/openmpi-mca-params.conf sets "pml = ^ucx" and Open
# MPI 4.1's pml_ucx_devices defaults to mlx* (UCX's PML disqualifies
# itself on any other device), so mpirun asks for "--mca pml ucx" with
# pml_ucx_devices "any" and tells UCX the device (UCX_NET_DEVICES=$DEV:1,
# exported to both ranks with -x).
# Results: mpi-sshd (a runs a command on b through dropbear), then
# kite-mpi's (mpi-pingpong, mpi-allreduce, mpi-alltoall), then mpi-exit
# (mpirun exited 0) (MPI_N).
MPI_N=$((2 + $(kite-mpi count 2>/dev/null || echo 3)))
MPI_SECS=${MPI_SECS:-300}
MPI_ITERS=${MPI_ITERS:-10}
MPI_KEY=/tmp/mpi.key
MPI_SSH_PORT=2222
MPI_RSH="dbclient -yy -p $MPI_SSH_PORT -i $MPI_KEY"

# mpi_sshd PEER: a client key here, PEER's dropbear with a host key of its
# own that lets that key in (root's authorized_keys); one result mpi-sshd.
mpi_sshd() {
	local pub ans out peer=$1
	rm -f $MPI_KEY
	if ! dropbearkey -t ed25519 -f $MPI_KEY >/tmp/mpi-key.log 2>&1; then
		fail mpi-sshd "dropbearkey: $(tail -n 2 /tmp/mpi-key.log)"
		return 1
	fi
	pub=$(dropbearkey -y -f $MPI_KEY | grep '^ssh-ed25519 ')
	ans=$(agent_call $peer 30 "SH - mkdir -p /root/.ssh && echo '$pub' >/root/.ssh/authorized_keys && rm -f /tmp/mpi-host.key && dropbearkey -t ed25519 -f /tmp/mpi-host.key >/dev/null 2>&1 && dropbear -s -r /tmp/mpi-host.key -p $MPI_SSH_PORT -P /tmp/mpi-sshd.pid")
	case $ans in
	"RC 0"*) ;;
	*) fail mpi-sshd "dropbear on $peer: ${ans:-no answer}"; return 1 ;;
	esac
	wait_until 10 sh -c "$NC -z $peer $MPI_SSH_PORT"
	out=$(timeout 30 $MPI_RSH $peer 'echo mpi-rsh-ok; command -v orted' </dev/null 2>&1)
	if echo "$out" | grep -q '^mpi-rsh-ok$' && echo "$out" | grep -q '/orted$'; then
		ok mpi-sshd
	else
		fail mpi-sshd "dbclient to $peer: $(echo "$out" | tail -n 2)"
		return 1
	fi
}

# mpi_run ME PEER DEV PEER_DEV [ARGS...]: kite-mpi ARGS with rank 0 here
# (address ME, device DEV) and rank 1 on PEER (device PEER_DEV), through
# mpirun with the UCX PML (two application contexts, so that each rank
# gets its own UCX_NET_DEVICES); its output in /tmp/mpi.out. Soft-RoCE
# reports wc.sl 0 (rdma-ucx.sh): UCX's ud_verbs, over which UCX connects
# rc_verbs endpoints, needs the destination-GID check off on an rxe rank.
mpi_run() {
	local me=$1 peer=$2 dev=$3 pdev=$4 fix='' pfix=''
	shift 4
	case $dev in rxe*) fix="-x UCX_UD_VERBS_ETH_DGID_CHECK=n" ;; esac
	case $pdev in rxe*) pfix="-x UCX_UD_VERBS_ETH_DGID_CHECK=n" ;; esac
	timeout $MPI_SECS mpirun --allow-run-as-root -H $me:1,$peer:1 \
		--mca plm_rsh_agent "$MPI_RSH" --mca oob_tcp_if_include ${me%.*}.0/24 \
		--mca pml ucx --mca pml_ucx_devices any --mca btl self --bind-to none \
		-np 1 -H $me:1 -x UCX_NET_DEVICES=$dev:1 $fix kite-mpi "$@" : \
		-np 1 -H $peer:1 -x UCX_NET_DEVICES=$pdev:1 $pfix kite-mpi "$@" \
		</dev/null >/tmp/mpi.out 2>&1
}

mpi_suite() {
	local rc t0 r n
	n=$((MPI_N - 2))
	if ! mpi_sshd $PEER; then
		for r in pingpong allreduce alltoall exit; do
			fail mpi-$r "no launcher: mpi-sshd failed"
		done
		return
	fi
	t0=$(date +%s)
	mpi_run $ME $PEER $DEV $DEV $MPI_ITERS
	rc=$?
	echo "info: mpirun took $(($(date +%s) - t0)) s, exit $rc"
	grep -E '^(info:|#) ' /tmp/mpi.out
	# kite-mpi's result lines, counted as ours (FAIL lines through fail).
	grep -E '^ok mpi-' /tmp/mpi.out
	failures=$((failures + $(grep -cE '^FAIL mpi-' /tmp/mpi.out)))
	grep -E '^FAIL mpi-' /tmp/mpi.out
	if [ "$(grep -cE '^(ok|FAIL) mpi-' /tmp/mpi.out)" -ne $n ]; then
		tail -n 20 /tmp/mpi.out
		for r in pingpong allreduce alltoall; do
			grep -qE "^(ok|FAIL) mpi-$r" /tmp/mpi.out ||
				fail mpi-$r "mpirun exit $rc: $(grep -iE -m 2 'error|fail|abort' /tmp/mpi.out | tr '\n' ' ')"
		done
	fi
	if [ $rc -eq 0 ]; then ok mpi-exit; else
		tail -n 10 /tmp/mpi.out
		fail mpi-exit "mpirun exit $rc$([ $rc -eq 124 ] && echo " (timeout after $MPI_SECS s)")"
	fi
	agent_call $PEER 30 "SH - kill \$(cat /tmp/mpi-sshd.pid)" >/dev/null
}
