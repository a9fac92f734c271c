"""``blosckit validate --dask [SCHEDULER]``: a corpus validated on
dask.distributed (a LocalCluster of one single-threaded worker process per
core by default, or the scheduler at an address), one JSON line per input
as results arrive, the same lines a plain ``--json`` run prints (in another
order); ``--resume FILE`` skips the inputs a previous run's JSON lines name.

Inputs go to the workers in batches of :data:`BATCH` names (a small file
takes well under a millisecond to check: a task each would cost more in
scheduling than in work); the workers read the files themselves, so they
must see the same paths (a LocalCluster does; a real cluster needs a
shared file system).  The dask ``distributed`` package is needed (the
``dask`` extra).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from typing import Callable

from .progress import Progress
from .report import EXIT_OK, UsageError, worse

__all__ = ["run", "is_address", "done_inputs", "BATCH", "LOCAL"]

BATCH = 200                    # input names per task
LOCAL = "local"                # --dask without an address


def is_address(text: str) -> bool:
    """``text`` names a scheduler (``tcp://host:8786``, ``host:8786``) or the
    local cluster, not an input path."""
    return text == LOCAL or "://" in text or bool(re.fullmatch(r"[\w.-]+:\d+", text))


def done_inputs(path: str) -> set[str]:
    """The inputs a previous run's JSON lines at ``path`` name (a line cut
    short by an interruption is skipped: that input is checked again)."""
    seen: set[str] = set()
    try:
        fh = open(path, encoding="utf-8")
    except FileNotFoundError:
        return seen
    with fh:
        for line in fh:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            name = rec.get("file") if "file" in rec else rec.get("error", {}).get("file")
            if isinstance(name, str):
                seen.add(name)
    return seen


def run(args: argparse.Namespace, inputs: list[str], check: Callable) -> int:
    """Validate ``inputs`` on dask, ``check`` (the plain run's handling of
    a batch of inputs, run on a worker: see ``validate.check_batch``) giving
    each input's status, JSON lines and stderr lines."""
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise UsageError("--dask needs dask.distributed (pip install 'blosckit[dask]')") \
            from None
    if args.offset is not None:
        raise UsageError("--offset reads one structure: not with --dask")
    if args.resume is not None:
        skip = done_inputs(args.resume)
        inputs = [n for n in inputs if n not in skip]
    batches = [inputs[k:k + BATCH] for k in range(0, len(inputs), BATCH)]
    note = Progress("validating on dask", len(inputs), "files", threshold=1)
    worst = EXIT_OK
    with _client(args.dask, Client, LocalCluster) as client:
        futures = [client.submit(check, b, args.deep, pure=False) for b in batches]
        for fut in as_completed(futures):
            for code, lines, errors in fut.result():
                worst = worse(worst, code)
                for line in errors:
                    print(line, file=sys.stderr)
                for line in lines:
                    print(line, flush=True)
                note.advance(1)
            fut.release()
    note.close()
    return worst


class _client:
    """A Client of the scheduler at ``address``, or of a LocalCluster of one
    single-threaded worker process per core (``local``)."""

    def __init__(self, address: str, client_type, cluster_type) -> None:
        self.cluster = None
        if address == LOCAL:
            self.cluster = cluster_type(n_workers=os.cpu_count() or 1, threads_per_worker=1,
                                        processes=True, dashboard_address=None)
            self.client = client_type(self.cluster)
        else:
            self.client = client_type(address)

    def __enter__(self):
        return self.client

    def __exit__(self, *exc) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()
