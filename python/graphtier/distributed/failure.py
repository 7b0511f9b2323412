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
  Losing the store itself means its host died: node 0's launcher (graphtier.distributed.launch,
  torchrun's agent), or rank 0 when the ranks were started by hand.
- `join` counts the ranks in before the process group, naming those that never arrive;
  `Watchdog.watch_signals` publishes a SIGTERM/SIGINT/SIGHUP at once, as a failure of this rank.
"""

from __future__ import annotations

import json
import os
import signal
import socket
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


def store_client(timeout_s: float, host: Optional[str] = None, port: Optional[int] = None) -> dist.Store:
    """A client of the rendezvous store of this run (its own connection: the watchdog's thread
    never shares a socket with the training thread), keys prefixed by the restart count so that a
    torchrun restart starts clean. `host`/`port`: MASTER_ADDR/MASTER_PORT's unless given."""
    host = host or os.environ.get("MASTER_ADDR", "127.0.0.1")
    port = port or int(os.environ.get("MASTER_PORT", "29500"))
    return prefixed(dist.TCPStore(host, port, is_master=False, timeout=timedelta(seconds=timeout_s)))


def prefixed(store: dist.Store) -> dist.Store:
    """`store` under graphtier's prefix (the restart count's: a torchrun restart starts clean)."""
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


def publish_failure(store: dist.Store, failed_rank: int, message: str) -> None:
    """Records `failed_rank`'s failure in the store of the run (a store_client) for every rank to
    see: its first record wins, and the first rank recorded is the one every rank names. The ranks'
    watchdogs and the launcher (graphtier.distributed.launch) publish through this one function."""
    if store.add(f"failed/{failed_rank}", 1) == 1:
        index = store.add("failures", 1)
        store.set(f"failure/{index}", f"rank {failed_rank}: {message}")


def launcher_hosts_store() -> bool:
    """True when the launcher (torchrun's agent, graphtier.distributed.launch) hosts the rendezvous
    store, as torch.distributed's env:// initialisation reads it; otherwise rank 0 does."""
    return os.environ.get("TORCHELASTIC_USE_AGENT_STORE", "") == "True"


def _store_host() -> str:
    return "the launcher of node 0" if launcher_hosts_store() else "rank 0"


def join(rank: int, world: int, timeout_s: float) -> dist.Store:
    """The rendezvous before the process group: connects to the store at MASTER_ADDR:MASTER_PORT
    (hosting it on rank 0 when no launcher does) and waits, at most `timeout_s` seconds, until all
    `world` ranks have arrived. Returns the store for dist.init_process_group(store=...), whose own
    wait for a rank that never starts is a bare "Socket Timeout" after twice the timeout. A rank
    missing at the deadline is a RendezvousError on every rank that arrived, naming the missing
    ranks and the address (rank 0 writes the verdict, so all of them say the same)."""
    host, port = os.environ.get("MASTER_ADDR", "127.0.0.1"), int(os.environ.get("MASTER_PORT", "29500"))
    where = f"{host}:{port}"
    deadline = time.monotonic() + timeout_s
    hosting = rank == 0 and not launcher_hosts_store()
    try:
        if not hosting:
            _wait_for_port(host, port, deadline)
        server = dist.TCPStore(host, port, world, hosting, timedelta(seconds=timeout_s), wait_for_workers=False)
    except (RuntimeError, OSError) as e:  # torch 1.13: TimeoutError; 2.x: DistNetworkError (a RuntimeError)
        raise RendezvousError(f"rank {rank}: no rendezvous store at {where} within {timeout_s:g} s (--dist-timeout); "
                              f"{_store_host()} hosts it: it did not start, or the ranks were given different "
                              f"MASTER_ADDR/MASTER_PORT") from e
    store = prefixed(server)
    # Counters only (add, never check: torch 1.13's PrefixStore has no check).
    store.add(f"arrived/{rank}", 1)
    arrived = store.add("arrived", 1)
    while arrived < world:
        if rank == 0 and time.monotonic() >= deadline:
            missing = [r for r in range(world) if not store.add(f"arrived/{r}", 0)]
            store.set("arrival_verdict", _missing_ranks(missing, world, where, timeout_s))
            store.add("arrival_verdict_set", 1)
            if not launcher_hosts_store():  # its store: left open until the others have read why
                read, until = store.add("arrival_read", 1), time.monotonic() + 5.0
                while read < world - len(missing) and time.monotonic() < until:
                    time.sleep(0.05)
                    read = store.add("arrival_read", 0)
        if store.add("arrival_verdict_set", 0):
            if rank != 0:
                store.add("arrival_read", 1)
            raise RendezvousError(store.get("arrival_verdict").decode())
        late = time.monotonic() >= deadline
        if late and rank != 0 and not store.add("arrived/0", 0) or time.monotonic() >= deadline + 5.0:
            # Rank 0, which gives the verdict, is one of the missing.
            missing = [r for r in range(world) if not store.add(f"arrived/{r}", 0)]
            raise RendezvousError(_missing_ranks(missing, world, where, timeout_s))
        time.sleep(0.05)
        arrived = store.add("arrived", 0)
    return server


def _wait_for_port(host: str, port: int, deadline: float) -> None:
    """Until the store's port accepts a connection (TimeoutError at `deadline`): TCPStore's own
    connect takes twice its timeout on torch 2.x and logs each failed try (a stack trace on 2.x)."""
    while True:
        try:
            socket.create_connection((host, port), timeout=max(0.1, min(1.0, deadline - time.monotonic()))).close()
            return
        except OSError:
            if time.monotonic() >= deadline:
                raise TimeoutError(f"{host}:{port} refused or did not answer") from None
            time.sleep(0.1)


def _missing_ranks(missing, world: int, where: str, timeout_s: float) -> str:
    names = ", ".join(str(r) for r in missing[:8]) + (f" and {len(missing) - 8} more" if len(missing) > 8 else "")
    return (f"rank{'s' if len(missing) > 1 else ''} {names} of {world} did not join the job at {where} within "
            f"{timeout_s:g} s (--dist-timeout): not started, or started with another MASTER_ADDR, MASTER_PORT or "
            f"WORLD_SIZE")


class RendezvousError(ConnectionError):
    """The ranks of a job did not all meet (a rank never started, a wrong address): no collective ran."""


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
            publish_failure(self.store, failed_rank, message)
        except Exception:  # the store is gone too: the others learn it from losing the store
            pass

    def watch_signals(self, signals=(signal.SIGTERM, signal.SIGINT, signal.SIGHUP)) -> "Watchdog":
        """From the main thread: `signals` end this process after publishing it as this rank's
        failure, at once, wherever the main thread is (blocked in a collective, a Python handler
        would wait for it to return): the C-level handler writes the signal's number to a pipe that a
        thread of ours reads (signal.set_wakeup_fd); the Python handler itself does nothing."""
        read_fd, write_fd = os.pipe()
        os.set_blocking(write_fd, False)
        for s in signals:
            signal.signal(s, lambda *_: None)
        signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
        wanted = {int(s) for s in signals}

        def wait() -> None:
            while True:
                data = os.read(read_fd, 1)
                if not data:
                    return
                if data[0] in wanted:
                    name = signal.Signals(data[0]).name
                    self.publish(self.rank, f"terminated by {name}")
                    print(f"{self.prog}: error: rank {self.rank}: terminated by {name}", file=sys.stderr, flush=True)
                    self.leave(128 + data[0])

        threading.Thread(target=wait, name=f"graphtier-signals-{self.rank}", daemon=True).start()
        return self

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
                failure = (f"lost the rendezvous store at {host[0]}:{host[1]} ({one_line(e)}); the launcher of "
                           f"node 0 hosts it, so it (or its machine) failed" if launcher_hosts_store() else
                           f"rank 0: lost the rendezvous store at {host[0]}:{host[1]} ({one_line(e)}); "
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
