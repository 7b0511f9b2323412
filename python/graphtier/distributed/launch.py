"""`python -m graphtier.distributed.launch -n P [--nnodes N --node-rank I --master-addr HOST] -- ARGS`:
starts this machine's P ranks of a distributed job (`python -m graphtier.train ARGS`, or `--module`)
with the environment torchrun gives its workers, on torch 1.13 and 2.x alike (Debian's torch 1.13
torchrun does not start on Python 3.11), and supervises them (README, "Distributed training").

- The launcher of node 0 hosts the rendezvous store (a TCPStore at MASTER_ADDR:MASTER_PORT, as
  torchrun's agent does: TORCHELASTIC_USE_AGENT_STORE), so the store outlives any rank: a rank that
  dies is named by the others whichever it is, and a rank that never starts is named by those that did.
- A rank killed by a signal (SIGKILL, the OOM killer, a crash; one that fails otherwise publishes
  its own failure) is published at once as that rank's failure through the store (the protocol of graphtier.distributed.failure), so every rank, on every
  machine, stops with one line naming it instead of waiting for its heartbeat to go stale; the
  launcher then gives its other ranks `--stop-grace` seconds to leave, SIGTERM, then SIGKILL, and
  exits with the failed rank's status (128 + N for signal N).
- SIGINT, SIGTERM and SIGHUP sent to the launcher are forwarded to its ranks (each in a session of its
  own); a second one kills them.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from typing import Dict, List, Optional, Sequence

import torch.distributed as dist

from graphtier.distributed import failure
from graphtier.distributed.comm import free_port

DEFAULT_PORT = 29500  # torchrun's
DEFAULT_MODULE = "graphtier.train"
PROG = "python -m graphtier.distributed.launch"


def exit_description(status: int) -> str:
    """A process's exit status as Popen reports it (-N: killed by signal N), in words."""
    if status < 0:
        try:
            return f"killed by {signal.Signals(-status).name}"
        except ValueError:
            return f"killed by signal {-status}"
    return f"exited with status {status}"


def shell_status(status: int) -> int:
    """The exit status a shell gives a process that ended with Popen's `status` (128 + N for signal N)."""
    return 128 - status if status < 0 else status


class LocalRanks:
    """This machine's ranks of one job: `nproc` processes `python ARGV...` with ranks
    node_rank * nproc + i and torchrun's worker environment. `host_store` (node 0's launcher)
    starts the rendezvous store here before the ranks; `tell_peers` publishes a failed rank at once
    (off, the others learn it from its heartbeat, as when a whole machine is lost)."""

    def __init__(self, argv: Sequence[str], nproc: int, *, nnodes: int = 1, node_rank: int = 0,
                 master_addr: str = "127.0.0.1", master_port: Optional[int] = None, env: Optional[Dict[str, str]] = None,
                 cwd: Optional[str] = None, host_store: Optional[bool] = None, tell_peers: bool = True,
                 store_timeout: float = 60.0):
        if nproc < 1 or nnodes < 1 or not 0 <= node_rank < nnodes:
            raise ValueError(f"--nproc-per-node {nproc}, --nnodes {nnodes}, --node-rank {node_rank}: expected "
                             f"--nproc-per-node >= 1, --nnodes >= 1 and 0 <= --node-rank < --nnodes")
        self.argv, self.nproc, self.nnodes, self.node_rank = list(argv), nproc, nnodes, node_rank
        self.world = nproc * nnodes
        self.master_addr = master_addr
        self.master_port = master_port if master_port is not None else (free_port() if nnodes == 1 else DEFAULT_PORT)
        self.env, self.cwd, self.tell_peers = env or {}, cwd, tell_peers
        self.host_store = node_rank == 0 if host_store is None else host_store
        self.store_timeout = store_timeout
        self.procs: List[subprocess.Popen] = []
        self.ended: Dict[int, int] = {}  # local index -> exit status
        self.first_failure: Optional[tuple] = None  # (rank, status)
        self._server = None
        self._client = None

    def rank(self, local: int) -> int:
        return self.node_rank * self.nproc + local

    def environment(self, local: int) -> Dict[str, str]:
        """What torchrun gives worker `local` of this node (its elastic agent's variables included)."""
        e = dict(os.environ)
        if self.nproc > 1 and "OMP_NUM_THREADS" not in e:
            e["OMP_NUM_THREADS"] = "1"  # as torchrun: the ranks share the machine's cores
        e.update(RANK=str(self.rank(local)), LOCAL_RANK=str(local), WORLD_SIZE=str(self.world),
                 LOCAL_WORLD_SIZE=str(self.nproc), GROUP_RANK=str(self.node_rank), GROUP_WORLD_SIZE=str(self.nnodes),
                 ROLE_NAME="default", ROLE_RANK=str(self.rank(local)), ROLE_WORLD_SIZE=str(self.world),
                 MASTER_ADDR=self.master_addr, MASTER_PORT=str(self.master_port), TORCHELASTIC_RESTART_COUNT="0",
                 TORCHELASTIC_MAX_RESTARTS="0", TORCHELASTIC_RUN_ID="graphtier",
                 TORCHELASTIC_USE_AGENT_STORE="True", PYTHONUNBUFFERED="1")
        # A failure is one graphtier line per rank: PyTorch's C++ errors (a socket timeout's log line
        # before the exception that says the same) stay out unless TORCH_CPP_LOG_LEVEL asks for them.
        # (ERROR is graphtier's own default, set in the launcher's environment by the package's import.)
        if e.get("TORCH_CPP_LOG_LEVEL", "ERROR") == "ERROR":
            e["TORCH_CPP_LOG_LEVEL"] = "FATAL"
        e.update(self.env)
        return e

    def start(self, stdout=None, stderr=None) -> "LocalRanks":
        """Starts the store (node 0) and the ranks; `stdout`/`stderr`: None (this process's) or a
        function of the local index giving a file."""
        if self.host_store:
            try:
                self._server = dist.TCPStore(self.master_addr, self.master_port, self.world, True,
                                             timedelta(seconds=self.store_timeout), wait_for_workers=False)
            except RuntimeError as e:
                raise OSError(f"launch: cannot host the rendezvous store on port {self.master_port} "
                              f"({failure.one_line(e)}): the port is taken; pick another with --master-port") from e
        for local in range(self.nproc):
            self.procs.append(subprocess.Popen(
                [sys.executable, *self.argv], env=self.environment(local), cwd=self.cwd,
                stdout=stdout(local) if stdout else None, stderr=stderr(local) if stderr else None,
                start_new_session=True))  # its own process group: a signal reaches it once, from here
        return self

    def poll(self) -> List[int]:
        """The local indices of the ranks that ended since the last call; a failure among them is
        published (see the class)."""
        now = []
        for local, p in enumerate(self.procs):
            if local not in self.ended and p.poll() is not None:
                self.ended[local] = p.returncode
                now.append(local)
                if p.returncode != 0 and self.first_failure is None:
                    self.first_failure = (self.rank(local), p.returncode)
                    # A rank that exits by itself has published its failure (graphtier.distributed.train
                    # does); one killed by a signal (SIGKILL, the OOM killer, a crash) could not.
                    if self.tell_peers and p.returncode < 0:
                        self._publish(self.rank(local), f"{exit_description(p.returncode)} (seen by its launcher)")
        return now

    def running(self) -> List[int]:
        return [local for local in range(len(self.procs)) if local not in self.ended]

    def signal(self, signum: int) -> None:
        for local in self.running():
            try:
                os.killpg(self.procs[local].pid, signum)
            except ProcessLookupError:
                pass

    def stop(self, grace: float) -> None:
        """Gives the running ranks `grace` seconds to leave, then SIGTERM and 3 s more, then SIGKILL."""
        for signum, wait in ((None, grace), (signal.SIGTERM, 3.0), (signal.SIGKILL, 5.0)):
            if signum is not None:
                self.signal(signum)
            deadline = time.monotonic() + wait
            while self.running() and time.monotonic() < deadline:
                time.sleep(0.05)
                self.poll()
            if not self.running():
                return

    def _publish(self, rank: int, message: str) -> None:
        try:
            if self._client is None:
                self._client = failure.prefixed(self._server) if self._server is not None else \
                    failure.store_client(2.0, self.master_addr, self.master_port)
            failure.publish_failure(self._client, rank, message)
        except Exception:  # no store (node 0 gone): the other ranks learn it from losing the store
            pass

    def close(self) -> None:
        """Ends the store: call once this machine's ranks have ended. Node 0 first waits (at most
        10 s) until the other machines' ranks are done with it, when none failed."""
        if self._server is not None and self.first_failure is None and self.world > self.nproc:
            store, deadline = failure.prefixed(self._server), time.monotonic() + 10.0
            try:
                while time.monotonic() < deadline and not all(store.add(f"done/{r}", 0) for r in range(self.world)):
                    time.sleep(0.1)
            except Exception:  # the store is ours: nothing to wait for once it fails
                pass
        self._client = self._server = None


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Starts this machine's ranks of a distributed graphtier job with the environment torchrun "
                    "gives its workers (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, "
                    "...), hosts the rendezvous store on node 0, and stops every rank when one fails.",
        epilog="example: python -m graphtier.distributed.launch -n 2 -- data/cora-p2 --epochs 30")
    parser.add_argument("-n", "--nproc-per-node", type=int, required=True, help="ranks on this machine")
    parser.add_argument("--nnodes", type=int, default=1, help="machines in the job (default 1)")
    parser.add_argument("--node-rank", type=int, default=0, help="this machine's index in [0, nnodes) (default 0)")
    parser.add_argument("--master-addr", default=None,
                        help="address of node 0, whose launcher hosts the rendezvous store (default 127.0.0.1 "
                             "on one machine; required with --nnodes > 1)")
    parser.add_argument("--master-port", type=int, default=None,
                        help=f"the store's port (default: a free port on one machine, {DEFAULT_PORT} with --nnodes > 1)")
    parser.add_argument("-m", "--module", default=DEFAULT_MODULE,
                        help=f"the Python module each rank runs (default {DEFAULT_MODULE})")
    parser.add_argument("--stop-grace", type=float, default=5.0,
                        help="seconds the other ranks have to stop on their own after one failed (they are told "
                             "through the store) before SIGTERM (default 5)")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="-- then the module's arguments")
    args = parser.parse_args(argv)
    if args.args[:1] == ["--"]:
        args.args = args.args[1:]
    if args.nnodes > 1 and args.master_addr is None:
        parser.error("--nnodes > 1 needs --master-addr (node 0's address, which every node can reach)")
    if args.master_addr is None:
        args.master_addr = "127.0.0.1"
    if not args.stop_grace >= 0:
        parser.error(f"--stop-grace: expected seconds >= 0, got {args.stop_grace}")
    return args


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The command (see the module's comment): 0 when every rank of this machine succeeded."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    received: List[int] = []

    def forward(signum, _frame) -> None:  # the ranks decide how to leave; a second signal kills them
        received.append(signum)
        ranks.signal(signum if len(received) == 1 else signal.SIGKILL)

    try:
        ranks = LocalRanks(["-m", args.module, *args.args], args.nproc_per_node, nnodes=args.nnodes,
                           node_rank=args.node_rank, master_addr=args.master_addr, master_port=args.master_port)
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, forward)
        ranks.start()
    except (ValueError, OSError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    while ranks.running():
        ranks.poll()
        if ranks.first_failure is not None and ranks.running():
            ranks.stop(args.stop_grace)
        time.sleep(0.05)
    ranks.close()
    if received:
        print(f"{PROG}: error: stopped by {signal.Signals(received[0]).name}", file=sys.stderr, flush=True)
        return 128 + received[0]
    if ranks.first_failure is not None:
        rank, status = ranks.first_failure
        print(f"{PROG}: error: rank {rank} {exit_description(status)}; its ranks on this machine stopped",
              file=sys.stderr, flush=True)
        return shell_status(status)
    return 0


if __name__ == "__main__":
    sys.exit(main())
