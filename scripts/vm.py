#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Kite VM launcher (engine behind scripts/vm.sh).

  vm.py run [options] NAME=SCRIPT [NAME=SCRIPT ...]
      Boot one guest per NAME=SCRIPT under QEMU TCG, each with a kite NIC, run
      SCRIPT in it (as /test.sh, see scripts/mkinitramfs.sh), collect the
      results it prints and its exit status, then clean up. Call it through
      scripts/vm.sh, which first enters a private network namespace.

  vm.py hmp NAME COMMAND          (for hooks) send a monitor command to NAME
  vm.py wait NAME REGEX [SECS]    (for hooks) wait until NAME's console log
                                  has a line matching REGEX
  vm.py say NAME TEXT             (for hooks) send one line to NAME's second
                                  serial port (/dev/ttyS1 in the guest; see
                                  host_listen/host_wait in tests/vm/rdma-lib.sh)

Each kite NIC has the QEMU id "kite0" (so a hook can run
"qom-set /machine/peripheral/kite0 PROP VALUE"); with --hotplug NAME, NAME's
kite0 sits in a hot-pluggable slot (slot 1 of the PCI bridge "br0"), so a
hook can "device_del kite0" and "device_add" it again with the arguments in
$KITE_RUN_DIR/NAME.kite0 (one line); a virtio-net NIC added with
--virtio has the id "virtio0", its netdev is "n1" (the kite NIC's is "n0").

More links, more NICs: each --xlink A=MODEL[,B=MODEL] adds one NIC of MODEL
("kite" or a QEMU NIC model such as virtio-net-pci) to guest A and one to
guest B, joined by a socket netdev of their own (A listens, B connects:
use the same direction as --link and --virtio).
Those NICs get the ids kite1, kite2, .. (MODEL kite), virtio1, virtio2, ..
(virtio-net-pci) or nic1, nic2, .. (other models), counted per guest in
--xlink order; netdevs n2, n3, ..; MAC 52:54:00:4b:XX:YY with XX = 0x10 +
the --xlink's position (0, 1, ..) and YY = the guest's index + 1 (kite0's
is 52:54:00:4b:00:YY, virtio0's 52:54:00:4b:01:YY). A guest with such NICs
is told each of its NICs' MACs in its environment as KITE_MAC_<id>=MAC
(kite0, virtio0, kite1, ..), so its script can pick a NIC by MAC (see
rdma_up_mac in tests/vm/rdma-lib.sh). Example, a third link between a Kite
NIC of a and a virtio-net NIC of b:
  vm.sh --link a,b --virtio a,b --xlink a=kite,b=virtio-net-pci ...

Guest protocol (one line each on the serial console):
  KITE-PLAN N             the script will print N results (first line)
  ok NAME                 a check passed
  FAIL NAME: DETAIL       a check failed
  skip NAME: WHY          a check was skipped
  retry NAME: WHY         check NAME runs again (a known external fault, or
                          a bounded repeat); not a result, but counted
  KITE-SYNC WORD          free-form rendezvous point for a host hook
  KITE-TEST-EXIT RC       printed by /init when /test.sh returned RC

Output: one line per result, "ok TEST/VM/CHECK" or "FAIL TEST/VM/CHECK: ...
(log: PATH)", lines starting with '#' for information, and last
"TEST: N passed, N failed[, N skipped][, N retried]". Exit status 0 when nothing failed.
A guest that never prints its exit marker (timeout, panic, QEMU error) or
exits non-zero without reporting a failure counts as one failure. Every
planned result that never came counts as one failure ("FAIL TEST/VM/plan:
..."); so do a missing plan and more results than planned (one each).
The guest's /init keeps kernel messages off the console while the script
runs (dmesg -n 1), so they cannot split result lines.
"""

import argparse
import fcntl
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "scripts", "lib"))
from results import Results, summary_line  # noqa: E402
RESULT_RE = re.compile(r"^(ok|FAIL|skip) (\S+)(?:: ?(.*))?$")
EXIT_RE = re.compile(r"^KITE-TEST-EXIT (-?\d+)$")
PLAN_RE = re.compile(r"^KITE-PLAN (\d+)$")
RETRY_RE = re.compile(r"^retry (\S+): ?(.*)$")
NAME_RE = re.compile(r"^[A-Za-z0-9_-]+$")
INIT_RE = re.compile(r"KITE-INIT ")  # firmware escapes may precede it
BASE_PORT = 47100


def die_with_parent():
    """Child processes get SIGKILL if the launcher dies (PR_SET_PDEATHSIG)."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)     # 1 = PR_SET_PDEATHSIG
    except Exception:
        pass


def ctl_path(sock_dir, name):
    return os.path.join(sock_dir, name + ".ctl")


def log_path(run_dir, name):
    return os.path.join(run_dir, name + ".log")


def mon_path(sock_dir, name):
    return os.path.join(sock_dir, name + ".mon")


class Guest:
    """One QEMU process and what we learn from its console."""

    def __init__(self, name, index, script, log, mon):
        self.name = name
        self.index = index
        self.script = script
        self.log = log
        self.mon = mon
        self.props = []
        self.nic = None           # NIC model on n0 (--nic-of), else --nic
        self.netdev = None        # QEMU -netdev argument, or None
        self.vnetdev = None       # virtio-net's -netdev argument, or None
        self.xnics = []           # --xlink NICs: (id, model, -netdev argument, mac)
        self.kite_dev = None      # kite0's -device argument
        self.ctl = None           # unix socket of the host->guest serial port
        self.wait_port = None     # connect= port that must listen first
        self.proc = None
        self.start = None
        self.boot_s = None
        self.end_s = None
        self.exit_rc = None
        self.results = []         # (status, check, detail)
        self.retries = []         # (check, why): "retry" lines
        self.plan = None          # results the script promised (KITE-PLAN)
        self.pos = 0
        self.partial = ""

    def poll_log(self, report, echo=False):
        """Read new console output; report each result line as it arrives."""
        try:
            with open(self.log, "rb") as f:
                f.seek(self.pos)
                data = f.read()
        except FileNotFoundError:
            return
        self.pos += len(data)
        text = self.partial + data.decode("utf-8", "replace")
        lines = text.split("\n")
        self.partial = lines.pop()
        for line in lines:
            line = line.rstrip("\r")
            # (--echo leaves out the kernel log /init prints at the end.)
            if echo and self.boot_s is not None and not EXIT_RE.match(line) \
                    and not PLAN_RE.match(line) and not line.startswith("dmesg: ") \
                    and not line.endswith("reboot: Power down"):
                print("[%s] %s" % (self.name, line), flush=True)
            m = RESULT_RE.match(line)
            if m:
                res = (m.group(1), m.group(2), m.group(3) or "")
                self.results.append(res)
                report(self, res)
                continue
            m = RETRY_RE.match(line)
            if m:
                self.retries.append((m.group(1), m.group(2)))
                report(self, ("retry", m.group(1), m.group(2)))
                continue
            m = PLAN_RE.match(line)
            if m:
                self.plan = int(m.group(1))
                continue
            m = EXIT_RE.match(line)
            if m:
                self.exit_rc = int(m.group(1))
                self.end_s = time.monotonic() - self.start
                continue
            if INIT_RE.search(line) and self.boot_s is None:
                self.boot_s = time.monotonic() - self.start


def build_initrd(base, guest, includes, work):
    """Base image + a small per-guest archive holding /test.sh and includes."""
    stage = os.path.join(work, guest.name + ".stage")
    os.makedirs(os.path.join(stage, "kite"))
    shutil.copy(guest.script, os.path.join(stage, "test.sh"))
    for inc in includes:
        shutil.copy(inc, os.path.join(stage, "kite", os.path.basename(inc)))
    extra = os.path.join(work, guest.name + ".extra.cpio.gz")
    with open(extra, "wb") as out:
        find = subprocess.Popen(["find", ".", "-mindepth", "1"], cwd=stage,
                                stdout=subprocess.PIPE)
        cpio = subprocess.Popen(["cpio", "-o", "-H", "newc", "--quiet", "-R", "0:0"],
                                cwd=stage, stdin=find.stdout, stdout=subprocess.PIPE)
        find.stdout.close()
        gz = subprocess.Popen(["gzip", "-1"], stdin=cpio.stdout, stdout=out)
        cpio.stdout.close()
        if gz.wait() or cpio.wait() or find.wait():
            raise RuntimeError("building the per-run cpio failed")
    initrd = os.path.join(work, guest.name + ".initrd")
    with open(initrd, "wb") as out:
        for part in (base, extra):
            with open(part, "rb") as f:
                shutil.copyfileobj(f, out)
    return initrd


def tcp_listening(port):
    """True when something in this network namespace listens on PORT."""
    want = ":%04X" % port
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            if fields[1].endswith(want) and fields[3] == "0A":    # LISTEN
                return True
    return False


def qemu_cmd(args, guest, initrd):
    mac = "52:54:00:4b:00:%02x" % (guest.index + 1)
    nic = guest.nic or args.nic
    if nic == "kite":
        dev = "kite,id=kite0,netdev=n0,mac=%s" % mac
        for p in guest.props:
            dev += "," + p
        if guest.name in args.hotplug:
            dev += ",bus=br0,addr=1"
    else:
        dev = "%s,netdev=n0,mac=%s,romfile=" % (nic, mac)
    append = "console=ttyS0 loglevel=%d panic=-1 KITE_VM=%s KITE_VM_INDEX=%d" % (
        args.loglevel, guest.name, guest.index)
    for kv in args.env:
        append += " " + kv
    if guest.xnics:
        # Only guests with --xlink NICs learn MACs (other runs stay as they were).
        if nic == "kite":
            append += " KITE_MAC_kite0=%s" % mac
        if guest.vnetdev:
            append += " KITE_MAC_virtio0=52:54:00:4b:01:%02x" % (guest.index + 1)
        for xid, _, _, xmac in guest.xnics:
            append += " KITE_MAC_%s=%s" % (xid, xmac)
    cmd = [args.qemu, "-accel", "tcg", "-machine", "q35", "-nodefaults", "-nographic",
           "-no-reboot", "-m", args.mem, "-smp", "1",
           "-L", "/usr/share/seabios", "-L", "/usr/share/qemu",
           "-kernel", args.kernel, "-initrd", initrd, "-append", append,
           "-chardev", "file,id=con0,path=%s" % guest.log, "-serial", "chardev:con0",
           "-monitor", "unix:%s,server=on,wait=off" % guest.mon,
           "-chardev", "socket,id=ctl0,path=%s,server=on,wait=off" % guest.ctl,
           "-serial", "chardev:ctl0"]
    if guest.name in args.hotplug:
        # A PCI bridge's slots are hot-pluggable (ACPI or SHPC); q35's root
        # bus is not.
        cmd += ["-device", "pci-bridge,id=br0,bus=pcie.0,chassis_nr=1"]
    if not guest.netdev and nic == "kite":
        dev = dev.replace("netdev=n0,", "")
    guest.kite_dev = dev if nic == "kite" else None
    if guest.netdev:
        cmd += ["-netdev", guest.netdev, "-device", dev]
    elif nic == "kite":
        cmd += ["-device", dev]
    if guest.vnetdev:
        cmd += ["-netdev", guest.vnetdev, "-device",
                "virtio-net-pci,id=virtio0,netdev=n1,mac=52:54:00:4b:01:%02x,romfile=" %
                (guest.index + 1)]
    for i, (xid, model, netdev, xmac) in enumerate(guest.xnics):
        nid = "n%d" % (i + 2)
        dev = "%s,id=%s,netdev=%s,mac=%s" % (model, xid, nid, xmac)
        if model != "kite":
            dev += ",romfile="
        cmd += ["-netdev", netdev % nid, "-device", dev]
    return cmd


def kill_group(proc, sig=signal.SIGTERM):
    if proc and proc.poll() is None:
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass


def stop(proc, grace=3.0):
    """Terminate a process group, SIGKILL if it does not go in time."""
    if proc is None or proc.poll() is not None:
        return
    kill_group(proc)
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        kill_group(proc, signal.SIGKILL)
        proc.wait()


def cmd_run(argv):
    ap = argparse.ArgumentParser(prog="vm.sh", description="Boot Kite test guests.")
    ap.add_argument("guests", nargs="+", metavar="NAME=SCRIPT")
    ap.add_argument("--test", help="test name: logs go to out/logs/TEST/")
    ap.add_argument("--timeout", type=float, default=300,
                    help="seconds for the whole run (default 300)")
    ap.add_argument("--link", action="append", default=[], metavar="A,B",
                    help="link guest A (listens) and B (connects) by a socket netdev")
    ap.add_argument("--no-net", action="append", default=[], metavar="NAME",
                    help="give NAME's NIC no netdev (its link is down)")
    ap.add_argument("--hotplug", action="append", default=[], metavar="NAME",
                    help="put NAME's kite NIC in a hot-pluggable slot (PCI bridge br0); "
                         "its -device arguments go to RUN_DIR/NAME.kite0")
    ap.add_argument("--virtio", action="append", default=[], metavar="A[,B]",
                    help="add a virtio-net NIC (netdev n1) to A, linked to B's by a "
                         "socket netdev of its own (without B: a socket with no peer)")
    ap.add_argument("--xlink", action="append", default=[], metavar="A=MODEL[,B=MODEL]",
                    help="one more NIC of MODEL (kite, virtio-net-pci, ..) for A, linked "
                         "to one more NIC of B by a socket netdev of its own (A listens, "
                         "B connects; without B: a socket with no peer); ids kite1.., "
                         "virtio1.., nic1..; the guest gets KITE_MAC_<id>=MAC")
    ap.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                    help="set KEY=VALUE in every guest's environment (kernel command line)")
    ap.add_argument("--props", action="append", default=[], metavar="NAME=P[,P..]",
                    help="extra -device kite properties for guest NAME")
    ap.add_argument("--include", action="append", default=[], metavar="FILE",
                    help="also put FILE into the guest as /kite/BASENAME")
    ap.add_argument("--hook", help="host command run while the guests run")
    ap.add_argument("--nic", default="kite",
                    help="NIC model (default kite; e.g. virtio-net-pci to try the launcher)")
    ap.add_argument("--nic-of", action="append", default=[], metavar="NAME=MODEL",
                    help="NIC model of guest NAME's linked NIC (e.g. b=virtio-net-pci "
                         "to put a Kite guest and a Soft-RoCE guest on one link)")
    ap.add_argument("--qemu", default=os.path.join(TOP, "out/qemu-system-x86_64"))
    ap.add_argument("--kernel", default=os.path.join(TOP, "out/guest/vmlinuz"))
    ap.add_argument("--initrd", default=os.path.join(TOP, "out/guest/initramfs.cpio.gz"))
    ap.add_argument("--mem", default="1G")
    ap.add_argument("--echo", action="store_true",
                    help="print each guest's console output (after boot) as it comes")
    ap.add_argument("--loglevel", type=int, default=4,
                    help="guest console loglevel (default 4: errors and worse)")
    args = ap.parse_args(argv)

    guests = []
    for i, spec in enumerate(args.guests):
        name, sep, script = spec.partition("=")
        if not sep or not NAME_RE.match(name):
            ap.error("bad guest spec %r (want NAME=SCRIPT)" % spec)
        if not os.path.isfile(script):
            ap.error("no such script: %s" % script)
        guests.append(Guest(name, i, script, None, None))
    by_name = {g.name: g for g in guests}
    if len(by_name) != len(guests):
        ap.error("guest names must be unique")
    for f in (args.qemu, args.kernel, args.initrd):
        if not os.path.exists(f):
            print("vm.sh: missing %s (run 'make all')" % f, file=sys.stderr)
            return 2
    test = args.test or os.path.splitext(os.path.basename(guests[0].script))[0]
    # The name becomes a directory under out/logs that is removed first.
    if not NAME_RE.match(test):
        ap.error("bad test name %r (want letters, digits, '_' or '-')" % test)

    for spec in args.nic_of:
        name, _, model = spec.partition("=")
        if name not in by_name or not model:
            ap.error("bad --nic-of %r" % spec)
        by_name[name].nic = model

    for spec in args.props:
        name, _, props = spec.partition("=")
        if name not in by_name:
            ap.error("--props for unknown guest %s" % name)
        by_name[name].props.append(props)
    for name in args.hotplug:
        if name not in by_name:
            ap.error("--hotplug for unknown guest %s" % name)

    # Network: linked pairs share a TCP socket netdev; other guests get a
    # listening socket nobody connects to (their link is up, frames vanish).
    port = BASE_PORT
    listeners, connectors = [], []
    for spec in args.link:
        a, _, b = spec.partition(",")
        if a not in by_name or b not in by_name:
            ap.error("--link names unknown guests: %s" % spec)
        by_name[a].netdev = "socket,id=n0,listen=127.0.0.1:%d" % port
        by_name[b].netdev = "socket,id=n0,connect=127.0.0.1:%d" % port
        by_name[b].wait_port = port
        listeners.append(by_name[a])
        connectors.append(by_name[b])
        port += 1
    vconnect = []
    for spec in args.virtio:
        a, _, b = spec.partition(",")
        if a not in by_name or (b and b not in by_name):
            ap.error("--virtio names unknown guests: %s" % spec)
        by_name[a].vnetdev = "socket,id=n1,listen=127.0.0.1:%d" % port
        if b:
            by_name[b].vnetdev = "socket,id=n1,connect=127.0.0.1:%d" % port
            vconnect.append((by_name[b], port))
        port += 1
    # Extra links: one more NIC on each side (ids and MACs: see the docstring).
    xcount = {}
    for k, spec in enumerate(args.xlink):
        ends = []
        for end in spec.split(","):
            name, sep, model = end.partition("=")
            if not sep or name not in by_name or not re.match(r"^[A-Za-z0-9_-]+$", model):
                ap.error("bad --xlink %r (want A=MODEL[,B=MODEL] with known guests)" % spec)
            ends.append((by_name[name], model))
        if len(ends) > 2 or (len(ends) == 2 and ends[0][0] is ends[1][0]):
            ap.error("bad --xlink %r (one or two different guests)" % spec)
        if k >= 0x10:
            ap.error("at most 16 --xlink")
        for j, (g, model) in enumerate(ends):
            base = {"kite": "kite", "virtio-net-pci": "virtio"}.get(model, "nic")
            xcount[(g.name, base)] = xcount.get((g.name, base), 0) + 1
            xid = "%s%d" % (base, xcount[(g.name, base)])
            mode = "listen" if j == 0 else "connect"
            g.xnics.append((xid, model, "socket,id=%%s,%s=127.0.0.1:%d" % (mode, port),
                            "52:54:00:4b:%02x:%02x" % (0x10 + k, g.index + 1)))
            if j == 1:
                vconnect.append((g, port))
        port += 1
    for kv in args.env:
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=[^\s]*$", kv):
            ap.error("bad --env %r (want KEY=VALUE without spaces)" % kv)
    for g in guests:
        if g.netdev is None and g.name not in args.no_net:
            g.netdev = "socket,id=n0,listen=127.0.0.1:%d" % port
            port += 1
            listeners.append(g)
        elif g.netdev is None:
            listeners.append(g)
    # A guest that connects a virtio link starts after the listeners (use
    # the same direction for --link and --virtio: A listens, B connects).
    for vg, _ in vconnect:
        if vg in listeners:
            listeners.remove(vg)
        if vg not in connectors:
            connectors.append(vg)

    # Two runs of one test name would share out/logs/TEST (the second
    # removes the first's logs while its guests write them): the second
    # waits for the first, at most KITE_VM_LOCK_WAIT seconds (default 600).
    os.makedirs(os.path.join(TOP, "out", "logs"), exist_ok=True)
    lock = open(os.path.join(TOP, "out", "logs", ".%s.lock" % test), "w")
    lock_end = time.monotonic() + float(os.environ.get("KITE_VM_LOCK_WAIT", "600"))
    said = False
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except OSError:
            if time.monotonic() > lock_end:
                print("FAIL %s/launcher: another run of '%s' holds out/logs/%s; not started"
                      % (test, test, test), flush=True)
                print(summary_line(test, 0, 1), flush=True)
                return 1
            if not said:
                print("# %s: waiting for another run of the same test to end" % test,
                      flush=True)
                said = True
            time.sleep(1)
    run_dir = os.path.join(TOP, "out", "logs", test)
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(run_dir)
    work = tempfile.mkdtemp(prefix="kite-vm.")   # per-run initrds, monitor sockets
    for g in guests:
        g.log = log_path(run_dir, g.name)
        g.mon = mon_path(work, g.name)
        g.ctl = ctl_path(work, g.name)

    results = Results(test)

    def report(guest, res):
        status, check, detail = res
        full = "%s/%s/%s" % (test, guest.name, check)
        if status in ("FAIL", "retry"):
            detail = "%s (log: %s)" % (detail, os.path.relpath(guest.log))
        results.add(status, full, detail, show=not args.echo)

    def launcher_fail(guest, check, detail, log=None, count=1):
        where = os.path.relpath(log or (guest.log if guest else run_dir))
        name = "%s/%s/%s" % (test, guest.name, check) if guest else "%s/%s" % (test, check)
        results.fail(name, "%s (log: %s)" % (detail, where), count=count)

    hook = None
    t0 = time.monotonic()
    deadline = t0 + args.timeout
    try:
        for g in guests:
            initrd = build_initrd(args.initrd, g, args.include, work)
            g.cmd = qemu_cmd(args, g, initrd)
            g.qemu_log = os.path.join(run_dir, g.name + ".qemu.log")
        with open(os.path.join(run_dir, "commands.txt"), "w") as f:
            for g in guests:
                f.write(" ".join(g.cmd) + "\n")
        for g in guests:
            if g.name in args.hotplug and g.kite_dev:
                with open(os.path.join(run_dir, g.name + ".kite0"), "w") as f:
                    f.write(g.kite_dev + "\n")

        def launch(g):
            g.start = time.monotonic()
            qlog = open(g.qemu_log, "wb")
            g.proc = subprocess.Popen(g.cmd, stdin=subprocess.DEVNULL, stdout=qlog,
                                      stderr=subprocess.STDOUT, start_new_session=True,
                                      preexec_fn=die_with_parent)
            qlog.close()

        for g in listeners:
            launch(g)
        for g in connectors:
            # connect= fails at once if the peer is not listening yet.
            ports = ([g.wait_port] if g.wait_port else []) + \
                [p for vg, p in vconnect if vg is g]
            for wp in ports:
                while not tcp_listening(wp):
                    if time.monotonic() > t0 + 30:
                        raise RuntimeError("peer of %s never listened on port %d" %
                                           (g.name, wp))
                    if any(p.proc.poll() is not None for p in listeners):
                        break
                    time.sleep(0.05)
            launch(g)

        if args.hook:
            env = dict(os.environ)
            env["KITE_RUN_DIR"] = run_dir
            env["KITE_SOCK_DIR"] = work
            env["KITE_VMCTL"] = os.path.abspath(__file__)
            env["KITE_VMS"] = " ".join(g.name for g in guests)
            hook_log = os.path.join(run_dir, "hook.log")
            with open(hook_log, "wb") as hl:
                hook = subprocess.Popen(["bash", "-c", args.hook], stdin=subprocess.DEVNULL,
                                        stdout=hl, stderr=subprocess.STDOUT, env=env,
                                        start_new_session=True,
                                        preexec_fn=die_with_parent)

        # Watch the consoles until every QEMU has exited or time runs out.
        timed_out = False
        while True:
            for g in guests:
                g.poll_log(report, args.echo)
                if g.exit_rc is not None and g.proc.poll() is None:
                    # /init powers off right after the marker; do not wait long.
                    if time.monotonic() - g.start - g.end_s > 10:
                        stop(g.proc)
            if all(g.proc.poll() is not None for g in guests):
                break
            if time.monotonic() > deadline:
                timed_out = True
                break
            time.sleep(0.1)
        for g in guests:
            g.stopped_at_deadline = g.proc.poll() is None
            stop(g.proc)
            g.poll_log(report, args.echo)
            if g.partial:
                g.partial += "\n"
                g.poll_log(report, args.echo)
        if hook is not None:
            if hook.poll() is None:
                # Give a hook a moment to notice the end, then stop it.
                try:
                    hook.wait(2)
                except subprocess.TimeoutExpired:
                    stop(hook)
                    launcher_fail(None, "hook", "host hook did not finish",
                                  os.path.join(run_dir, "hook.log"))
            if hook.returncode not in (None, 0, -signal.SIGTERM):
                launcher_fail(None, "hook", "host hook exited %d" % hook.returncode,
                              os.path.join(run_dir, "hook.log"))

        for g in guests:
            fails = sum(1 for r in g.results if r[0] == "FAIL")
            if g.exit_rc is None:
                # A guest still running at the deadline was stopped by us.
                why = "timed out after %ds" % args.timeout if timed_out and \
                    g.stopped_at_deadline else "QEMU exited %s" % g.proc.returncode
                tail = ""
                try:
                    with open(g.qemu_log, errors="replace") as f:
                        q = f.read().strip().splitlines()
                    if q:
                        tail = "; qemu: " + q[-1][:200]
                except OSError:
                    pass
                launcher_fail(g, "exit", "no KITE-TEST-EXIT marker (%s%s)" % (why, tail))
            elif g.exit_rc != 0 and fails == 0:
                launcher_fail(g, "exit", "guest script exited %d" % g.exit_rc)
            elif not g.results:
                launcher_fail(g, "exit", "guest script reported no results")
            got = len(g.results)
            if g.plan is None:
                if g.exit_rc is not None:
                    launcher_fail(g, "plan", "the script declared no plan (KITE-PLAN N)")
            elif got < g.plan:
                # Each missing result is a failure (the first line says so).
                launcher_fail(g, "plan", "%d of %d planned results missing (got %d)" % (
                    g.plan - got, g.plan, got), count=g.plan - got)
            elif got > g.plan:
                launcher_fail(g, "plan", "%d results, more than the %d planned" % (got, g.plan))
            print("# %s: boot %s, script done %s, exit %s, log %s" % (
                g.name,
                "%.1fs" % g.boot_s if g.boot_s is not None else "-",
                "%.1fs" % g.end_s if g.end_s is not None else "-",
                "-" if g.exit_rc is None else g.exit_rc, os.path.relpath(g.log)), flush=True)
    except Exception as e:  # report, never leave a summary out
        launcher_fail(None, "launcher", "%s: %s" % (type(e).__name__, e))
    finally:
        for g in guests:
            stop(g.proc)
        if hook is not None:
            stop(hook)
        shutil.rmtree(work, ignore_errors=True)

    print("# %s: %.1fs" % (test, time.monotonic() - t0))
    return results.end()


def cmd_hmp(argv):
    """Send one HMP command to a guest's monitor and print the reply."""
    name, command = argv[0], " ".join(argv[1:])
    path = mon_path(os.environ["KITE_SOCK_DIR"], name)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(path)

    def read_prompt():
        buf = b""
        while not buf.endswith(b"(qemu) "):
            chunk = s.recv(4096)
            if not chunk:
                break
            buf += chunk
        return buf.decode("utf-8", "replace")

    read_prompt()                          # banner
    s.sendall(command.encode() + b"\n")
    reply = read_prompt()
    s.close()
    # HMP echoes the command line; drop the echo and the final prompt.
    out = reply.replace("(qemu) ", "").strip()
    lines = [ln for ln in out.splitlines() if command not in ln]
    if lines:
        print("\n".join(lines))
    return 0


def cmd_say(argv):
    """Send one line to a guest's second serial port (/dev/ttyS1)."""
    name, text = argv[0], " ".join(argv[1:])
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(ctl_path(os.environ["KITE_SOCK_DIR"], name))
    s.sendall(text.encode() + b"\n")
    # Stay connected a moment: QEMU reads the socket as the UART drains.
    time.sleep(1)
    s.close()
    return 0


def cmd_wait(argv):
    """Wait until a guest's console log has a line matching REGEX."""
    name, regex = argv[0], re.compile(argv[1])
    secs = float(argv[2]) if len(argv) > 2 else 120
    path = log_path(os.environ["KITE_RUN_DIR"], name)
    end = time.monotonic() + secs
    while time.monotonic() < end:
        try:
            with open(path, errors="replace") as f:
                for line in f:
                    if regex.search(line.rstrip("\r\n")):
                        return 0
        except FileNotFoundError:
            pass
        time.sleep(0.2)
    print("vm.py wait: %s: no line matching %r after %ds" % (name, argv[1], secs),
          file=sys.stderr)
    return 1


def main():
    # Turn SIGTERM/SIGHUP into SystemExit so the cleanup in cmd_run runs
    # (QEMU runs in its own session and would outlive us otherwise).
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: sys.exit(128 + signum))
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, rest = sys.argv[1], sys.argv[2:]
    if cmd == "run":
        return cmd_run(rest)
    if cmd == "hmp" and len(rest) >= 2:
        return cmd_hmp(rest)
    if cmd == "wait" and len(rest) >= 2:
        return cmd_wait(rest)
    if cmd == "say" and len(rest) >= 2:
        return cmd_say(rest)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
