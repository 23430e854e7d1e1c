"""spmd.data: record sources and the distributed data loader over spmd/data_loader.h: global
batches built from every process's share of a source, deterministically shuffled, resumable, and
with the same number of batches in every process, so that no process leaves a training loop
early (seed 001's "last batch" hang)."""
import numpy as _np

from . import _spmd
from ._core import _bytes, _host

_d = _spmd.data

Source = _d.Source
npy_source = _d.npy_source
record_file_source = _d.record_file_source


def in_memory_source(data):
    """The rows of `data` (a NumPy array, or anything np.asarray takes) as records."""
    return _d._in_memory_source(*_bytes(_host(data)))


class DistributedDataLoader:
    """Iterates global batches: each a dict with "data" (an Array of global_batch_size rows laid
    out by `sharding`), "mask" (bool: False for padding rows of the last batch), "epoch" and
    "index". `source` is a Source, a NumPy array (its rows), or a path to a .npy file or a
    directory of them. Each iteration of the loader is one epoch; next() runs on across epochs.
    state() and restore(state) resume exactly where a run left off."""

    def __init__(self, source, global_batch_size, sharding, *, shuffle=True, seed=0,
                 drop_remainder=False, prefetch=-1):
        if isinstance(source, str):
            source = npy_source(source)
        elif not isinstance(source, Source):
            source = in_memory_source(_np.asarray(source))
        self._core = _d.DistributedDataLoader(source, int(global_batch_size), sharding, shuffle,
                                              int(seed), drop_remainder, int(prefetch))

    @property
    def batches_per_epoch(self):
        return self._core.batches_per_epoch

    def next(self):
        return self._core.next()

    def __iter__(self):
        for _ in range(self._core.batches_per_epoch):
            yield self._core.next()

    def state(self):
        return self._core.state()

    def restore(self, state):
        self._core.restore(state)


__all__ = ["DistributedDataLoader", "Source", "in_memory_source", "npy_source",
           "record_file_source"]
