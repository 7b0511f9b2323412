"""Failure is an error, not a hang: the checks before the first collective and the watchdog that
makes every rank exit when one dies or raises (docs/architecture.md, Scale-out).

Every rank talks to the rendezvous store (the TCPStore at MASTER_ADDR:MASTER_PORT that
torch.distributed's env:// initialisation uses) through its own client, never a transport of ours:

- `check_ranks` exchanges one record per rank (graphtier version, partition identity, the error
  this rank met opening its partition) before any collective; rank 0 compares them and writes a
  verdict that every rank reads, so a missing directory or a mixed install is one clear error on
  every rank instead of a collective that never completes.
- `Watchdog` beats a per-rank counter every `interval` seconds and watches its successor's (a ring:
  each rank reads one counter, whatever the world size). A counter that stops moving for
  `stale_after` seconds (a killed or frozen process) is published as that rank's failure; a rank
  that raises publishes its own. Every watchdog polls the failure count and, once it is non-zero,
  prints the failed rank's message and ends its process with status 1, wherever its threads are
  blocked (a collective with a dead peer may otherwise wait for the process group's timeout).
  Losing the store itself means its host died: rank 0 when launched without torchrun.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from datetime import timedelta
from typing import Callable, Optional

import torch.distributed as dist

from graphtier.training.report import one_line

# What a collective raises when a peer is gone or late (Gloo: "Connection closed by peer",
# "Timed out waiting ... for recv"; NCCL: DistBackendError). Such an error on this rank is a
# symptom; the watchdog is given `stale_after` seconds to name the cause before it is reported.
_COMMUNICATION_WORDS = ("connection closed", "connection reset", "broken pipe", "timed out", "timeout",
                        "gloo", "nccl", "socket", "peer")


def add_arguments(parser) -> None:
    """--dist-timeout, the one option of failure handling, for every job that runs distributed."""
    parser.add_argument("--dist-timeout", type=float, default=60.0,
                        help="distributed: seconds after which a collective that does not complete is an error (more "
                             "than any stretch one rank works alone, e.g. rank 0 writing a checkpoint); a rank that "
                             "dies or raises makes every rank exit within this time")


def check_arguments(args) -> None:
    """ValueError naming a --dist-timeout that is not a positive number of seconds."""
    if not args.dist_timeout > 0:
        raise ValueError(f"--dist-timeout: expected a number of seconds > 0, got {args.dist_timeout}")


def is_communication_error(e: BaseException) -> bool:
    if type(e).__name__ in ("DistBackendError", "DistNetworkError", "DistStoreError"):
        return True
    text = str(e).lower()
    return isinstance(e, RuntimeError) and any(w in text for w in _COMMUNICATION_WORDS)


def store_client(timeout_s: float) -> dist.Store:
    """A client of the rendezvous store of this run (its own connection: the watchdog's thread
    never shares a socket with the training thread), keys prefixed by the restart count so that a
    torchrun restart starts clean."""
    host, port = os.environ.get("MASTER_ADDR", "127.0.0.1"), int(os.environ.get("MASTER_PORT", "29500"))
    store = dist.TCPStore(host, port, is_master=False, timeout=timedelta(seconds=timeout_s))
    return dist.PrefixStore(f"graphtier/{os.environ.get('TORCHELASTIC_RESTART_COUNT', '0')}/", store)


def check_ranks(store: dist.Store, rank: int, world: int, record: dict, error: Optional[str]) -> None:
    """Compares every rank's `record` (equal on every rank of a consistent job: version, partition
    identity) and raises ValueError on every rank when one differs or a rank met an `error`
    (naming the rank). Store operations only, no collective."""
    store.set(f"hello/{rank}", json.dumps({"record": record, "error": error}))
    if rank == 0:
        problems = []
        for other in range(world):
            seen = json.loads(store.get(f"hello/{other}").decode())
            if seen["error"]:
                problems.append(f"rank {other}: {seen['error']}")
            elif seen["record"] != record:
                diff = [f"{k} {seen['record'].get(k)!r} (rank 0: {record.get(k)!r})" for k in sorted(record)
                        if seen["record"].get(k) != record.get(k)]
                problems.append(f"rank {other} differs from rank 0: {', '.join(diff)}")
        store.set("verdict", json.dumps(problems))
    problems = json.loads(store.get("verdict").decode())
    read = store.add("verdict_read", 1)
    if problems and rank == 0:
        # Rank 0 hosts the store when not launched by torchrun: it leaves once every rank has read
        # the verdict, so none of them meets a lost store instead of the reason.
        deadline = time.monotonic() + 5.0
        while read < world and time.monotonic() < deadline:
            time.sleep(0.05)
            read = store.add("verdict_read", 0)
    if problems:
        raise ValueError("; ".join(problems[:4]) + (f" (and {len(problems) - 4} more)" if len(problems) > 4 else ""))


class Watchdog:
    """Heartbeats and failure propagation through the store (see the module's comment). `exit`
    ends the process (os._exit after flushing; a test may replace it)."""

    def __init__(self, store: dist.Store, rank: int, world: int, prog: str, *, interval: float = 0.5,
                 stale_after: float = 10.0, exit: Optional[Callable[[int], None]] = None):
        self.store, self.rank, self.world, self.prog = store, rank, world, prog
        self.interval, self.stale_after = interval, stale_after
        self._exit = exit or _hard_exit
        self._stop = threading.Event()
        self._successor = (rank + 1) % world
        self.diagnosis: Optional[str] = None
        # Set once a store operation failed: later ones would only fail again, and PyTorch 2.x logs
        # each such failure with a 20-frame C++ stack trace after this rank's one-line reason.
        self._store_lost = False
        self._leaving, self._left = threading.Lock(), False
        self._thread = threading.Thread(target=self._run, name=f"graphtier-watchdog-{rank}", daemon=True)

    def start(self) -> "Watchdog":
        self.store.add(f"beat/{self.rank}", 1)
        self._thread.start()
        return self

    def stop(self) -> None:
        """This rank finished: its successor's watcher stops expecting beats from it."""
        if self._stop.is_set():
            return
        self._stop.set()
        self._thread.join()
        try:
            self.store.add(f"done/{self.rank}", 1)
        except Exception:  # the job is over; a store already gone changes nothing
            pass

    def publish(self, failed_rank: int, message: str) -> None:
        """Records `failed_rank`'s failure for every rank to see (the first one published wins)."""
        if self._store_lost:
            return
        try:
            if self.store.add(f"failed/{failed_rank}", 1) == 1:
                index = self.store.add("failures", 1)
                self.store.set(f"failure/{index}", f"rank {failed_rank}: {message}")
        except Exception:  # the store is gone too: the others learn it from losing the store
            pass

    def first_failure(self) -> Optional[str]:
        if self.store.add("failures", 0) == 0:
            return None
        return self.store.get("failure/1").decode()

    def wait_for_diagnosis(self, seconds: float) -> Optional[str]:
        """After a communication error on this rank: waits up to `seconds` for a failure of
        another rank to be published (the watchdog then exits the process) or found."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.diagnosis is not None:
                return self.diagnosis
            time.sleep(self.interval / 2)
        return self.diagnosis

    def _run(self) -> None:
        last_seen, last_change = -1, time.monotonic()
        watching = self.world > 1
        while not self._stop.wait(self.interval):
            try:
                self.store.add(f"beat/{self.rank}", 1)
                failure = self.first_failure()
                if failure is None and watching:
                    if self.store.add(f"done/{self._successor}", 0):
                        watching = False
                    else:
                        beat = self.store.add(f"beat/{self._successor}", 0)
                        now = time.monotonic()
                        if beat != last_seen:
                            last_seen, last_change = beat, now
                        elif now - last_change > self.stale_after:
                            self.publish(self._successor, f"no heartbeat for {now - last_change:.0f} s "
                                                          f"(the process died, was killed or hangs)")
                            failure = self.first_failure()
            except Exception as e:
                if self._stop.is_set():
                    return
                self._store_lost = True
                host = os.environ.get("MASTER_ADDR", "127.0.0.1"), os.environ.get("MASTER_PORT", "29500")
                failure = (f"rank 0: lost the rendezvous store at {host[0]}:{host[1]} ({one_line(e)}); "
                           f"rank 0 hosts it when not launched by torchrun, so rank 0 (or the launcher) failed")
            if failure is not None and not self._stop.is_set():
                self.diagnosis = failure
                self._report_and_exit(f"rank {self.rank} stops: {failure}")
                return

    def _report_and_exit(self, line: str) -> None:
        print(f"{self.prog}: error: {line}", file=sys.stderr, flush=True)
        self.leave(1)

    def leave(self, status: int) -> None:
        """Ends the process after a failure. Rank 0 (the store's host when not launched by torchrun)
        first waits, a bounded time, until every other live rank has read the failure: leaving at
        once would make them report the lost store instead of the rank that failed."""
        with self._leaving:  # once per process: the watchdog's thread and the training thread may both get here
            if self._left:
                threading.Event().wait()  # the other one ends the process
            self._left = True
        if self._store_lost:
            self._exit(status)
        try:
            seen = self.store.add("acks", 1)
            if self.rank == 0:
                deadline = time.monotonic() + self.stale_after + 2.0
                while seen < self.world - 1 and time.monotonic() < deadline:
                    time.sleep(self.interval / 4)
                    seen = self.store.add("acks", 0)
        except Exception:
            pass
        self._exit(status)


def _hard_exit(status: int) -> None:
    # os._exit: threads blocked in a collective with a dead peer, and the loader's engine threads,
    # would keep an ordinary exit waiting.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
