"""spmd.distributed: jax.distributed's initialize, shutdown, is_initialized and client() (the
coordination service's key-value store and barriers), over spmd/distributed.h.

initialize() also makes Ctrl-C work in blocking calls: from the main thread it points Python's
signal wakeup fd at a pipe that python/src/bind_interrupt.cc watches, so that SIGINT interrupts
a call waiting for other processes (with the GIL released) within about 100 ms; the call raises
KeyboardInterrupt, and the other processes learn of it as of this process's failure (see
spmd::distributed::interrupt)."""
import os
import signal
import threading

from . import _spmd

_d = _spmd.distributed
_pipe = None  # (read fd, write fd, the wakeup fd it replaced) while watching


def initialize(coordinator_address=None, num_processes=None, process_id=None,
               local_device_ids=None, cluster_detection_method=None,
               initialization_timeout=300, *, num_cpu_devices=None,
               cpu_threads_per_device=None):
    """jax.distributed.initialize (seed 000): every argument optional under spmdrun, Slurm and
    Open MPI; RuntimeError when called twice. num_cpu_devices and cpu_threads_per_device are
    spmd's: CPU devices per process (also SPMD_CPU_DEVICES), and the threads each computes with
    (also SPMD_CPU_THREADS_PER_DEVICE; default: the process's cores divided among its devices and
    the other processes of its host)."""
    if isinstance(local_device_ids, int):
        local_device_ids = [local_device_ids]
    _d.initialize(coordinator_address, num_processes, process_id,
                  None if local_device_ids is None else list(local_device_ids),
                  cluster_detection_method, float(initialization_timeout), num_cpu_devices,
                  cpu_threads_per_device)
    _watch_interrupts()


def shutdown():
    """jax.distributed.shutdown: leaves the cluster (waiting at its shutdown barrier)."""
    _stop_watching()
    _d.shutdown()


is_initialized = _d.is_initialized
client = _d.client
Client = _d.Client


def _watch_interrupts():
    global _pipe
    if _pipe is not None or threading.current_thread() is not threading.main_thread():
        return  # set_wakeup_fd works from the main thread only
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    previous = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    _pipe = (read_fd, write_fd, previous)
    _spmd._watch_interrupts(read_fd, previous)


def _stop_watching():
    global _pipe
    if _pipe is None:
        return
    read_fd, write_fd, previous = _pipe
    _spmd._stop_watching_interrupts()
    if threading.current_thread() is threading.main_thread():
        signal.set_wakeup_fd(previous)
    os.close(read_fd)
    os.close(write_fd)
    _pipe = None


__all__ = ["Client", "client", "initialize", "is_initialized", "shutdown"]
