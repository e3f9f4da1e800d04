# SPDX-License-Identifier: GPL-2.0
# Storage helpers for guest scripts (busybox sh), sourced after /kite/lib.sh
# and /kite/rdma-lib.sh: an NVMe over Fabrics target (nvmet, nvmet-rdma,
# configfs, a brd RAM disk as its namespace), the NVMe host side
# (nvme-cli discover/connect, fio with crc32c verify, disconnect), an NFS
# server exporting a tmpfs over RDMA (rpc.nfsd, rpc.mountd, exportfs) and
# the NFS client (mount.nfs4 proto=rdma). Debian's nvme-cli, fio and
# nfs-utils come with the storage image (scripts/mkinitramfs.sh,
# initramfs-storage.cpio.gz).
#
# Each guest of the storage group serves one NVMe subsystem (stor_nqn) with
# one namespace on every address it has; a host guest connects to one
# address at a time, so the namespace it sees is the only nvme block device.

NVME=/usr/sbin/nvme
FIO=/usr/bin/fio
NVME_PORT=4420
NFS_RDMA_PORT=20049
CFS=/sys/kernel/config/nvmet
# Namespace size (MiB): the verify job's data fits in it.
STOR_DISK_MB=${STOR_DISK_MB:-288}
# The verify job's data (MiB of 4k random writes, read back): the headline
# pairing (Kite<->Kite over IPv4) writes STOR_VERIFY_MB, the others
# STOR_VERIFY_OTHER_MB, because a job with a Soft-RoCE end runs at a few
# hundred IOPS under TCG (256 MiB would take 5 min each).
STOR_VERIFY_MB=${STOR_VERIFY_MB:-256}
STOR_VERIFY_OTHER_MB=${STOR_VERIFY_OTHER_MB:-16}
# Seconds of 4k random reads at queue depth 16.
STOR_READ_SECS=${STOR_READ_SECS:-5}
# The host gives up on a lost controller after this many seconds; the
# outage of the fault check is well below it.
STOR_CTRL_LOSS_TMO=${STOR_CTRL_LOSS_TMO:-120}
STOR_RECONNECT_DELAY=2
# Keep-alive timeout (s) of the fault check's connection: short enough
# that an outage of 10 s is always noticed (the host must reconnect, not
# just resume); the other connections keep the default.
STOR_KATO=3
# Bounds (s) of each step; fio's are generous (Soft-RoCE under TCG does
# about 1000 IOPS).
STOR_CMD_SECS=60
STOR_FIO_SECS=${STOR_FIO_SECS:-900}
# Kernel log lines that mean a bug, beyond lib.sh's (hung tasks, lockups).
STOR_BAD_DMESG="$BAD_DMESG|blocked for more than|soft lockup|hard LOCKUP|self-detected stall"

# stor_nqn GUEST: the NQN of the subsystem GUEST serves.
stor_nqn() { echo "nqn.2014-08.org.kite:storage-$1"; }

# stor_hostnqn: this guest's own host NQN (each guest makes its own).
stor_hostnqn() {
	[ -s /etc/nvme/hostnqn ] || $NVME gen-hostnqn >/etc/nvme/hostnqn
}

configfs_up() {
	grep -q ' /sys/kernel/config ' /proc/mounts ||
		mount -t configfs configfs /sys/kernel/config
}

# nvmet_setup NQN: the target modules, a RAM disk and the subsystem NQN
# with it as namespace 1 (any host may connect). Ports come with
# nvmet_port.
nvmet_setup() {
	local s=$CFS/subsystems/$1
	modprobe brd rd_nr=1 rd_size=$((STOR_DISK_MB * 1024)) max_part=0 || return 1
	modprobe nvmet && modprobe nvmet_rdma && configfs_up || return 1
	mkdir "$s" && echo 1 >"$s/attr_allow_any_host" &&
		mkdir "$s/namespaces/1" &&
		echo -n /dev/ram0 >"$s/namespaces/1/device_path" &&
		echo 1 >"$s/namespaces/1/enable"
}

# nvmet_port ID ADDR ipv4|ipv6 NQN: an RDMA port on ADDR serving NQN.
nvmet_port() {
	local p=$CFS/ports/$1
	mkdir "$p" && echo rdma >"$p/addr_trtype" && echo "$3" >"$p/addr_adrfam" &&
		echo "$2" >"$p/addr_traddr" && echo $NVME_PORT >"$p/addr_trsvcid" &&
		ln -s "$CFS/subsystems/$4" "$p/subsystems/$4"
}

# nvmet_teardown: remove every port, subsystem and namespace, then the
# modules and the RAM disk (all must go: a module still in use is a leak).
# Prints what failed.
nvmet_teardown() {
	local p s l n rc=0
	for p in "$CFS"/ports/*; do
		[ -d "$p" ] || continue
		for l in "$p"/subsystems/*; do
			[ -L "$l" ] || continue
			rm "$l" || rc=1
		done
		rmdir "$p" || rc=1
	done
	for s in "$CFS"/subsystems/*; do
		[ -d "$s" ] || continue
		for n in "$s"/namespaces/*; do
			[ -d "$n" ] || continue
			echo 0 >"$n/enable"
			rmdir "$n" || rc=1
		done
		rmdir "$s" || rc=1
	done
	rmmod_loaded nvmet_rdma nvmet brd || rc=1
	return $rc
}

# rmmod_loaded MODULE...: unload each MODULE that is loaded, in order.
rmmod_loaded() {
	local m rc=0
	for m in "$@"; do
		[ -d /sys/module/$m ] || continue
		rmmod $m || { echo "rmmod $m: $(cat /sys/module/$m/refcnt 2>/dev/null) users"; rc=1; }
	done
	return $rc
}

# nvme_blk: the block device of the one connected namespace.
nvme_blk() {
	local b
	for b in /sys/block/nvme*n1; do
		# (nvmeXcYn1: one path of a multipath namespace, not for I/O)
		case ${b##*/} in nvme*c*) continue ;; esac
		[ -e "$b" ] && { echo "${b##*/}"; return 0; }
	done
	return 1
}
no_nvme_blk() { ! nvme_blk >/dev/null; }

# nvme_ctrl NQN: the controller (nvmeN) connected to subsystem NQN.
nvme_ctrl() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$1" ] && { echo "${c##*/}"; return 0; }
	done
	return 1
}
ctrl_live() { [ "$(cat /sys/class/nvme/$1/state 2>/dev/null)" = live ]; }

# fio_verify NAME FILE MB [ARGS...]: MB MiB of 4k random writes to FILE
# (each block once), every block read back and checked (crc32c in each
# block's header); fio fails on the first mismatch or I/O error. ARGS
# (fio options) override those (the last one counts).
fio_verify() {
	local name=$1 file=$2 mb=$3 out
	shift 3
	out=/tmp/fio.$name
	if timeout $STOR_FIO_SECS $FIO --name="$name" --filename="$file" --size="${mb}M" \
		--rw=randwrite --bs=4k --ioengine=libaio --iodepth=16 --direct=1 \
		--verify=crc32c --do_verify=1 --verify_fatal=1 --randrepeat=0 \
		--output-format=terse --terse-version=3 "$@" >"$out" 2>&1; then
		ok "$name"
		echo "info: $name: $(fio_summary "$out")"
		return 0
	fi
	fail "$name" "fio exit $?: $(grep -v '^3;' "$out" | tail -n 3)"
	return 1
}

# fio_summary FILE: write and read IOPS of a terse (v3) fio report.
fio_summary() {
	awk -F';' '$1 == 3 { printf "read %s IOPS, write %s IOPS, %s s\n", $8, $49, ($9 + $50) / 1000 }' "$1"
}

# fio_run NAME FILE RW BS QD SECS: a timed run; prints "NAME IOPS KBPS
# LAT_MEAN_US" (the read side of the terse report) on success.
fio_run() {
	local name=$1 out=/tmp/fio.$1
	timeout $((STOR_CMD_SECS + $6)) $FIO --name="$name" --filename="$2" --rw="$3" \
		--bs="$4" --iodepth="$5" --runtime="$6" --time_based --ioengine=libaio \
		--direct=1 --size="$((STOR_VERIFY_MB))M" --output-format=terse --terse-version=3 \
		>"$out" 2>&1 || return 1
	awk -F';' -v n="$name" '$1 == 3 && $5 == 0 && $8 > 0 { print n, $8, $7, $40; ok = 1 }
		END { exit !ok }' "$out"
}

# nvme_host_suite NAME ADDR NQN MB: this guest as the NVMe host of NQN at
# ADDR: discover, connect, the fio verify job of MB MiB, 4k random reads,
# disconnect. Five
# results NAME-discover|connect|verify|randread|disconnect; after a failed
# connect the rest fail at once.
NVME_HOST_RESULTS=5
nvme_host_suite() {
	local n=$1 addr=$2 nqn=$3 mb=$4 out ctrl blk r
	modprobe nvme_rdma
	stor_hostnqn
	if out=$(timeout $STOR_CMD_SECS $NVME discover -t rdma -a "$addr" -s $NVME_PORT 2>&1) &&
		echo "$out" | grep -q "subnqn: *$nqn\$"; then
		ok "$n-discover"
	else
		fail "$n-discover" "$(echo "$out" | tail -n 3)"
	fi
	if ! out=$(timeout $STOR_CMD_SECS $NVME connect -t rdma -a "$addr" -s $NVME_PORT -n "$nqn" \
		--ctrl-loss-tmo=$STOR_CTRL_LOSS_TMO --reconnect-delay=$STOR_RECONNECT_DELAY 2>&1) ||
		! wait_until 20 nvme_blk; then
		fail "$n-connect" "$(echo "$out" | tail -n 2) $(dmesg | grep -E 'nvme|rdma' | tail -n 3)"
		for r in verify randread disconnect; do fail "$n-$r" "not run: no connection"; done
		timeout $STOR_CMD_SECS $NVME disconnect -n "$nqn" >/dev/null 2>&1
		return 1
	fi
	ctrl=$(nvme_ctrl "$nqn") blk=$(nvme_blk)
	ok "$n-connect"
	echo "info: $n: $ctrl ($blk) $(cat /sys/class/nvme/$ctrl/address 2>/dev/null)"
	fio_verify "$n-verify" /dev/$blk "$mb"
	if out=$(fio_run "$n-randread" /dev/$blk randread 4k 16 $STOR_READ_SECS); then
		ok "$n-randread"
		echo "info: $out (name IOPS KiB/s mean-latency-us)"
	else
		fail "$n-randread" "$(tail -n 3 /tmp/fio.$n-randread)"
	fi
	if out=$(timeout $STOR_CMD_SECS $NVME disconnect -n "$nqn" 2>&1) && wait_until 20 no_nvme_blk; then
		ok "$n-disconnect"
	else
		fail "$n-disconnect" "$out"
	fi
}

# nvme_fault_suite NAME ADDR NQN HOOK_NETDEV: the link goes down for
# STOR_OUTAGE_SECS in the middle of a fio verify job on the namespace of
# NQN at ADDR (the host hook's "link NETDEV off", then "on"); the host must
# notice, reconnect by itself, and the job must end with every block
# verified. Six results NAME-connect|link-off|link-on|verify|reconnected|
# disconnect.
STOR_OUTAGE_SECS=10
NVME_FAULT_RESULTS=6
nvme_fault_suite() {
	local n=$1 addr=$2 nqn=$3 nd=$4 out ctrl blk pid r since
	modprobe nvme_rdma
	stor_hostnqn
	if ! out=$(timeout $STOR_CMD_SECS $NVME connect -t rdma -a "$addr" -s $NVME_PORT -n "$nqn" \
		--ctrl-loss-tmo=$STOR_CTRL_LOSS_TMO --reconnect-delay=$STOR_RECONNECT_DELAY \
		--keep-alive-tmo=$STOR_KATO 2>&1) || ! wait_until 20 nvme_blk; then
		fail "$n-connect" "$(echo "$out" | tail -n 2) $(dmesg | grep -E 'nvme|rdma' | tail -n 3)"
		for r in link-off link-on verify reconnected disconnect; do fail "$n-$r" "not run: no connection"; done
		timeout $STOR_CMD_SECS $NVME disconnect -n "$nqn" >/dev/null 2>&1
		return 1
	fi
	ctrl=$(nvme_ctrl "$nqn") blk=$(nvme_blk)
	ok "$n-connect"
	# A verify job long enough that the outage falls inside it: 32 MiB
	# at 400 IOPS, about 20 s of writes, then as long reading back.
	fio_verify "$n-verify" /dev/$blk 32 --rate_iops=400 >/tmp/fault.fio 2>&1 &
	pid=$!
	# (fio lays out and starts its job first.)
	sleep 5
	since=$(dmesg | wc -l)
	# (host_call's request line must reach the console: no redirection)
	if ! kill -0 $pid 2>/dev/null; then
		fail "$n-link-off" "the verify job ended before the outage: $(tail -n 2 /tmp/fault.fio)"
	elif host_call link "$nd" off; then
		ok "$n-link-off"
	else
		fail "$n-link-off" "$HOST_ANS"
	fi
	sleep $STOR_OUTAGE_SECS
	if ! host_call link "$nd" on; then
		fail "$n-link-on" "$HOST_ANS"
	elif ! kill -0 $pid 2>/dev/null; then
		fail "$n-link-on" "the verify job ended during the outage: $(tail -n 2 /tmp/fault.fio)"
	else
		ok "$n-link-on"
	fi
	wait $pid
	cat /tmp/fault.fio
	grep -q "^FAIL " /tmp/fault.fio && failures=$((failures + 1))
	# The host lost the controller (keep-alive or I/O error) and got it
	# back on its own (the job cannot end without it, unless it failed).
	if wait_until $STOR_CMD_SECS sh -c "dmesg | sed '1,${since}d' | grep -q '$ctrl: Successfully reconnected'" &&
		wait_until $STOR_CMD_SECS ctrl_live "$ctrl"; then
		ok "$n-reconnected"
	else
		fail "$n-reconnected" "state $(cat /sys/class/nvme/$ctrl/state 2>/dev/null): $(dmesg | sed "1,${since}d" | grep "$ctrl" | tail -n 3)"
	fi
	out=$(dmesg | sed "1,${since}d" | grep "$ctrl")
	echo "$out" | sed 's/^/info: dmesg: /' | head -n 10
	if out=$(timeout $STOR_CMD_SECS $NVME disconnect -n "$nqn" 2>&1) && wait_until 20 no_nvme_blk; then
		ok "$n-disconnect"
	else
		fail "$n-disconnect" "$out"
	fi
}

# ---- NFS ---------------------------------------------------------------------
NFS_EXPORT=/export
NFS_MNT=/mnt/nfs

# nfs_server_start: nfsd serving NFSv4 only (no rpcbind, no lockd: those
# are NFSv3's) over TCP 2049 and RDMA 20049, exporting a tmpfs as the
# pseudo-root (fsid=0). rpc.mountd answers the kernel's export upcalls.
nfs_server_start() {
	modprobe nfsd && modprobe rpcrdma || return 1
	grep -q ' /proc/fs/nfsd ' /proc/mounts || mount -t nfsd nfsd /proc/fs/nfsd || return 1
	mkdir -p $NFS_EXPORT && mount -t tmpfs -o size=256m tmpfs $NFS_EXPORT || return 1
	chmod 1777 $NFS_EXPORT
	echo "$NFS_EXPORT *(rw,fsid=0,no_root_squash,insecure,no_subtree_check,sync)" >/etc/exports
	exportfs -ra || return 1
	rpc.mountd -N 3 -u || return 1
	# A short grace period: no client has state to reclaim.
	# (numeric ports: the image has no /etc/services)
	rpc.nfsd -N 3 --grace-time 10 --lease-time 10 --port 2049 --rdma=$NFS_RDMA_PORT 2 || return 1
	grep -q "rdma $NFS_RDMA_PORT" /proc/fs/nfsd/portlist
}

# nfs_server_stop: nfsd, mountd and the exports down, the modules out.
nfs_server_stop() {
	local rc=0
	rpc.nfsd 0 || rc=1
	exportfs -ua || rc=1
	killall rpc.mountd 2>/dev/null
	wait_until 10 sh -c '! pidof rpc.mountd'
	umount /proc/fs/nfsd || rc=1
	umount $NFS_EXPORT || rc=1
	rmmod_loaded nfsd rpcrdma || rc=1
	return $rc
}

# nfs_client_suite NAME ADDR PEER_AGENT: mount ADDR:/ over RDMA (NFS 4.2),
# write 64 MiB of random data and read it back after a remount (sha256
# equal here and on the server, asked through PEER_AGENT's agent), a fio
# verify job on a file in the mount, unmount. Five results
# NAME-mount|sha256|server-sha256|verify|umount.
NFS_CLIENT_RESULTS=5
nfs_client_suite() {
	local n=$1 addr=$2 peer=$3 opts out sum sum2 r
	opts=vers=4.2,proto=rdma,port=$NFS_RDMA_PORT,soft,timeo=600,retrans=2
	modprobe nfsv4 && modprobe rpcrdma
	mkdir -p $NFS_MNT
	if ! out=$(timeout $STOR_CMD_SECS mount.nfs4 "$addr:/" $NFS_MNT -o "$opts" 2>&1); then
		fail "$n-mount" "$out $(dmesg | grep -iE 'rpcrdma|nfs' | tail -n 2)"
		for r in sha256 server-sha256 verify umount; do fail "$n-$r" "not run: not mounted"; done
		return 1
	fi
	if grep -q " $NFS_MNT nfs4 .*proto=rdma" /proc/mounts; then
		ok "$n-mount"
	else
		fail "$n-mount" "not an RDMA mount: $(grep " $NFS_MNT " /proc/mounts)"
	fi
	head -c $((64 << 20)) /dev/urandom >/tmp/nfs.rand
	sum=$(sha256sum </tmp/nfs.rand | cut -d' ' -f1)
	cp /tmp/nfs.rand $NFS_MNT/rand && sync
	rm -f /tmp/nfs.rand
	# Read back through a new mount: nothing comes from the page cache.
	# Without it the reads below would hit the cache or the bare local
	# directory, and pass.
	if ! out=$(umount $NFS_MNT 2>&1 &&
		timeout $STOR_CMD_SECS mount.nfs4 "$addr:/" $NFS_MNT -o "$opts" 2>&1); then
		fail "$n-sha256" "remount: $out"
		for r in server-sha256 verify umount; do fail "$n-$r" "not run: remount failed"; done
		umount $NFS_MNT 2>/dev/null
		return 1
	fi
	sum2=$(timeout $STOR_FIO_SECS sha256sum <$NFS_MNT/rand | cut -d' ' -f1)
	[ -n "$sum2" ] && [ "$sum2" = "$sum" ] && ok "$n-sha256" ||
		fail "$n-sha256" "wrote $sum, read back '${sum2}'"
	out=$(agent_call "$peer" $STOR_CMD_SECS "SH - sha256sum <$NFS_EXPORT/rand")
	case $out in
	"RC 0"*"$sum"*) ok "$n-server-sha256" ;;
	*) fail "$n-server-sha256" "server: $out" ;;
	esac
	rm -f $NFS_MNT/rand
	# 64 KiB blocks: each is an RDMA chunk (beyond the inline size).
	fio_verify "$n-verify" $NFS_MNT/fio.dat 64 --bs=64k
	rm -f $NFS_MNT/fio.dat
	if out=$(umount $NFS_MNT 2>&1); then ok "$n-umount"; else fail "$n-umount" "$out"; fi
}

# stor_host_unload: the host and client modules out.
stor_host_unload() {
	rmmod_loaded nvme_rdma nvme_fabrics nfsv4 nfs rpcrdma
}

# rdma_unload: the RDMA devices and drivers out (a storage ULP that leaked
# an MR, QP or PD keeps its device, so kite_ib would not unload).
rdma_unload() {
	local d rc=0
	for d in /sys/class/infiniband/rxe*; do
		[ -d "$d" ] && { $RDMA link delete "${d##*/}" || rc=1; }
	done
	[ -d /sys/module/rdma_rxe ] && { rmmod rdma_rxe || rc=1; }
	[ -d /sys/module/kite_ib ] && { rmmod kite_ib || rc=1; }
	[ -d /sys/module/kite ] && { rmmod kite || rc=1; }
	return $rc
}

# stor_dmesg_check NAME: no kernel log line that means a bug.
stor_dmesg_check() {
	local bad
	bad=$(dmesg | grep -E "$STOR_BAD_DMESG")
	[ -z "$bad" ] && ok "$1" || fail "$1" "$(echo "$bad" | head -n 3)"
}

# nvme_bench_host KIND ADDR NQN MTU SECS: make bench's NVMe over RDMA rows,
# this guest as the host of NQN at ADDR (connected for these runs only):
# fio 4k random reads at queue depth 16 (IOPS), 4k random reads at queue
# depth 1 (mean latency, us) and 128k sequential reads at queue depth 16
# (MiB/s), SECS seconds each. One line per case, as bench-a.sh's:
#   BENCH KIND TOOL SIZE MTU 1 value V tries=1   (or ... FAILED)
nvme_bench_host() {
	local kind=$1 addr=$2 nqn=$3 mtu=$4 secs=$5 blk= c out v
	modprobe nvme_rdma
	stor_hostnqn
	if timeout $STOR_CMD_SECS $NVME connect -t rdma -a "$addr" -s $NVME_PORT -n "$nqn" \
		>/tmp/bench.nvme 2>&1 && wait_until 20 nvme_blk; then
		blk=$(nvme_blk)
	else
		echo "# $kind nvme connect to $addr: $(tail -n 2 /tmp/bench.nvme | tr '\n' ' ')"
	fi
	for c in nvme_randread:4096:randread:4k:16 nvme_read_lat:4096:randread:4k:1 \
		nvme_seqread:131072:read:128k:16; do
		set -- $(echo "$c" | tr : ' ')
		if [ -n "$blk" ] && out=$(fio_run "$1" /dev/$blk "$3" "$4" "$5" "$secs"); then
			# out: NAME IOPS KiB/s LAT_US
			case $1 in
			nvme_randread) v=$(echo "$out" | awk '{ print $2 }') ;;
			nvme_read_lat) v=$(echo "$out" | awk '{ printf "%.2f", $4 }') ;;
			*) v=$(echo "$out" | awk '{ printf "%.2f", $3 / 1024 }') ;;
			esac
			echo "BENCH $kind $1 $2 $mtu 1 value $v tries=1"
		else
			[ -n "$blk" ] && echo "# $kind $1: $(tail -n 2 /tmp/fio.$1 | tr '\n' ' ')"
			echo "BENCH $kind $1 $2 $mtu 1 FAILED"
		fi
	done
	[ -z "$blk" ] || timeout $STOR_CMD_SECS $NVME disconnect -n "$nqn" >/dev/null 2>&1
}
