"""Hosts for multi-host tests: network namespaces on a bridge, made and removed by the test.

    with Hosts(3) as hosts:                 # namespaces spmd<pid>h0..h2 and a switch spmd<pid>sw
        hosts.address(0)                    # "10.<a>.<b>.1", host 0's only non-loopback address
        p = hosts.start(1, argv, env)       # argv runs on host 1, with hostname "host1"
        hosts.link_down(2)                  # a cut cable: no FIN, no RST
        hosts.drop_packets(2)               # iptables: drop all of host 2's packets, both ways
        hosts.heal(2)                       # link up, rules gone

Each host is a network namespace with one veth interface whose other end sits on a bridge in a
switch namespace of its own, so every packet stays inside namespaces this object made: nothing is
sent to the machine's own addresses or beyond. Programs run under `unshare --uts` with the
hostname "host<i>", so spmd tells hosts apart by what differs between real hosts (the hostname;
the boot id is shared), not by SPMD_HOST_ID. The subnet is derived from the pid so that tests
running at once do not collide. Everything is removed on exit, processes included (by pid).

Needs root (creating namespaces); `available()` says why not, for the caller to skip.
"""
import os
import shutil
import subprocess


def _run(*cmd):
    subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=30)


def available():
    """None when namespaces can be made here, else the reason they cannot."""
    if os.geteuid() != 0:
        return "not root: creating network namespaces needs root"
    for tool in ("ip", "iptables", "unshare"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    probe = f"spmdprobe{os.getpid()}"
    try:
        _run("ip", "netns", "add", probe)
    except (subprocess.CalledProcessError, OSError) as e:
        return f"cannot create a network namespace: {getattr(e, 'stderr', e)}"
    _run("ip", "netns", "del", probe)
    return None


class Hosts:
    def __init__(self, count):
        self.count = count
        tag = os.getpid() % 100000
        self.prefix = f"spmd{tag}"
        self.subnet = f"10.{100 + tag % 100}.{tag // 100 % 250}"
        self.procs = []

    def ns(self, i):
        return f"{self.prefix}h{i}"

    def address(self, i):
        return f"{self.subnet}.{i + 1}"

    def __enter__(self):
        sw = f"{self.prefix}sw"
        try:
            _run("ip", "netns", "add", sw)
            _run("ip", "-n", sw, "link", "add", "br0", "type", "bridge")
            _run("ip", "-n", sw, "link", "set", "br0", "up")
            for i in range(self.count):
                ns = self.ns(i)
                _run("ip", "netns", "add", ns)
                _run("ip", "-n", ns, "link", "set", "lo", "up")
                _run("ip", "-n", ns, "link", "add", "eth0", "type", "veth", "peer", "name",
                     f"p{i}", "netns", sw)
                _run("ip", "-n", ns, "addr", "add", f"{self.address(i)}/24", "dev", "eth0")
                _run("ip", "-n", ns, "link", "set", "eth0", "up")
                _run("ip", "-n", sw, "link", "set", f"p{i}", "master", "br0")
                _run("ip", "-n", sw, "link", "set", f"p{i}", "up")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        for i in range(self.count):
            subprocess.run(["ip", "netns", "del", self.ns(i)], capture_output=True, timeout=30)
        subprocess.run(["ip", "netns", "del", f"{self.prefix}sw"], capture_output=True, timeout=30)
        return False

    def start(self, i, argv, env, **popen):
        """Runs argv on host i (its namespace, hostname host<i>); output merged into stdout."""
        wrapped = ["ip", "netns", "exec", self.ns(i), "unshare", "--uts", "--", "sh", "-c",
                   f'hostname host{i} && exec "$@"', "sh", *argv]
        p = subprocess.Popen(wrapped, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, **popen)
        self.procs.append(p)
        return p

    def link_down(self, i):
        _run("ip", "-n", self.ns(i), "link", "set", "eth0", "down")

    def drop_packets(self, i):
        # iptables in the host's namespace (this kernel has no netem for `tc ... loss 100%`):
        # every packet in and out is dropped silently, as by a dead switch port.
        for chain in ("INPUT", "OUTPUT"):
            _run("ip", "netns", "exec", self.ns(i), "iptables", "-A", chain, "-j", "DROP")

    def heal(self, i):
        _run("ip", "netns", "exec", self.ns(i), "iptables", "-F")
        _run("ip", "-n", self.ns(i), "link", "set", "eth0", "up")
