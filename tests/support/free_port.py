"""A TCP port for a test's coordinator, as tools::free_port() (tools/common/subprocess.h) picks
one: at random below the kernel's ephemeral range (which bind(0) and every connect() take from,
so a port found there can be taken again before the test binds it), and reserved for this
process's life by an exclusive lock on <temp>/spmd-free-ports/<port>, which the C++ tests' ports
share: no two tests running at once are handed the same port.

  sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "support"))
  from free_port import free_port
"""
import fcntl
import os
import random
import socket
import tempfile

_LOWEST = 10000
_held = []  # the lock files' descriptors: closing one would end its reservation


def _ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _bindable(port):
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("0.0.0.0", port))
            return True
        except OSError:
            return False


def _reserve(port):
    folder = os.path.join(tempfile.gettempdir(), "spmd-free-ports")
    try:
        os.makedirs(folder, exist_ok=True)
        # Read-only: flock needs no more, so another user's lock file serves too.
        fd = os.open(os.path.join(folder, str(port)), os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC,
                     0o666)
    except OSError:
        return True  # not ours to use: no reservation, as before
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False  # another live process holds it
    _held.append(fd)
    return True


def free_port():
    low = _ephemeral_low()
    if low <= _LOWEST + 1:
        raise RuntimeError("free_port: no ports below the ephemeral range")
    for _ in range(200):
        port = random.randint(_LOWEST, low - 1)
        if _bindable(port) and _reserve(port):
            return port
    raise RuntimeError("free_port: no free port found below the ephemeral range")
