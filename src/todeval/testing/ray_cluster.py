"""A Ray cluster of several nodes on this machine, for tests and benches.

Each node is a ``ray start --block`` process in its own process group and temporary
directory, with its own ports: a head without CPUs (so it hosts no episode workers) and worker
nodes with a few CPUs each. :meth:`LocalRayCluster.kill_node` kills one node's processes at
once, as a lost machine would; :meth:`LocalRayCluster.stop` ends every node this object
started, by process group (never ``ray stop``, which would end other clusters on the machine).

Drive it from a process of its own with :meth:`LocalRayCluster.env` (its nodes run without
token authentication), not from a process that has run a private Ray (``ray.init()`` without
an address, ``--executor ray`` without ``--ray-address``): Ray then sets ``RAY_AUTH_MODE=token``
for that process, its native side keeps the mode, and every actor such a driver starts here
dies at once (ActorDiedError: its owner is reported dead).

with LocalRayCluster(workers=2) as cluster:
    subprocess.run([..., "--executor", "ray", "--ray-address", cluster.address],
                   env=cluster.env())
    cluster.kill_node(0)
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Self, TextIO

STARTED = "Ray runtime started"
WORKER_PORTS = 40
"""Ports each node's worker processes may take (disjoint ranges, one per node)."""
WORKER_PORT_SLOTS = range(20000, 30000, WORKER_PORTS)
PORT_CLAIMS = Path(tempfile.gettempdir()) / "todeval-ray-worker-ports"
"""Lock files by which each cluster on this machine claims its nodes' worker port ranges."""


def ray_env() -> dict[str, str]:
    """The environment for the nodes and the drivers that join them: no usage report, no
    token authentication (a cluster on one machine, reached on its own address), and worker
    processes at the driver's priority (Ray starts them at niceness 15, which on a machine
    shared with other work starves the episodes, not Ray's own processes)."""
    env = dict(os.environ)
    env["RAY_DISABLE_USAGE_STATS"] = "1"
    env["RAY_AUTH_MODE"] = "disabled"
    env["RAY_worker_niceness"] = "0"
    return env


@dataclass
class RayNode:
    """One ``ray start --block`` process (the leader of its process group)."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def alive(self) -> bool:
        return self.process.poll() is None


class LocalRayCluster:
    """A head and ``workers`` worker nodes of ``cpus`` CPUs each, on this machine."""

    def __init__(
        self,
        workers: int,
        *,
        cpus: int = 1,
        object_store_mb: int = 80,
        start_timeout_s: float = 90.0,
    ) -> None:
        self.workers = workers
        self.cpus = cpus
        self.object_store_mb = object_store_mb
        self.start_timeout_s = start_timeout_s
        self.port = 0
        self.nodes: list[RayNode] = []  # worker nodes, in the order they were added
        self.head: RayNode | None = None
        self._dir: tempfile.TemporaryDirectory[str] | None = None
        self._claims: list[TextIO] = []  # held lock files: this cluster's worker port ranges
        self._given: set[int] = set()  # every port handed to a node of this cluster
        self._added = 0

    @property
    def address(self) -> str:
        """``HOST:PORT`` of the head, for ``--ray-address``."""
        return f"127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        return ray_env()

    def _root(self) -> Path:
        if self._dir is None:
            self._dir = tempfile.TemporaryDirectory(prefix="todeval-ray-")
        return Path(self._dir.name)

    def _unused_ports(self, count: int) -> list[int]:
        """``count`` ports on 127.0.0.1 that nothing listens on, distinct from each other and
        from every port given to this cluster before: each is held bound until all are chosen
        (a port bound and released at once may be handed out again by the next bind: two of a
        node's agents were once given the same one, and the node did not start)."""
        held: list[socket.socket] = []
        ports: list[int] = []
        try:
            while len(ports) < count:
                sock = socket.socket()
                held.append(sock)
                sock.bind(("127.0.0.1", 0))
                port: int = sock.getsockname()[1]
                if port not in self._given:
                    ports.append(port)
                    self._given.add(port)
        finally:
            for sock in held:
                sock.close()
        return ports

    def _worker_ports(self) -> list[str]:
        """A range of ports for one node's workers that no other node of any cluster started
        by this class on the machine has (clusters of two test processes run at once): each
        range is claimed by an exclusive lock on a file of its own, held until :meth:`stop`."""
        PORT_CLAIMS.mkdir(exist_ok=True)
        first = random.Random().randrange(len(WORKER_PORT_SLOTS))
        for k in range(len(WORKER_PORT_SLOTS)):
            low = WORKER_PORT_SLOTS[(first + k) % len(WORKER_PORT_SLOTS)]
            claim = (PORT_CLAIMS / f"{low}.lock").open("a")
            try:
                fcntl.flock(claim, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                claim.close()
                continue
            self._claims.append(claim)
            high = low + WORKER_PORTS - 1
            return ["--min-worker-port", str(low), "--max-worker-port", str(high)]
        raise RuntimeError("every worker port range is held by another Ray cluster")

    def _spawn(self, name: str, args: list[str]) -> RayNode:
        temp = self._root() / name
        temp.mkdir()
        log = self._root() / f"{name}.log"
        listen, grpc, metrics, runtime_env = self._unused_ports(4)
        command = [
            sys.executable,
            "-m",
            "ray.scripts.scripts",
            "start",
            "--block",
            "--disable-usage-stats",
            "--include-log-monitor=false",
            f"--temp-dir={temp}",
            f"--object-store-memory={self.object_store_mb * 1024 * 1024}",
            f"--dashboard-agent-listen-port={listen}",
            f"--dashboard-agent-grpc-port={grpc}",
            f"--metrics-export-port={metrics}",
            f"--runtime-env-agent-port={runtime_env}",
            *self._worker_ports(),
            *args,
        ]
        with log.open("wb") as out:
            process = subprocess.Popen(
                command,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=ray_env(),
                start_new_session=True,  # its own process group: killed as one
            )
        return RayNode(name, process, log)

    def _wait_started(self, node: RayNode) -> None:
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            text = node.log.read_text(encoding="utf-8", errors="replace")
            if STARTED in text:
                return
            if not node.alive:
                raise RuntimeError(f"ray node {node.name} did not start:\n{text[-2000:]}")
            time.sleep(0.2)
        raise RuntimeError(f"ray node {node.name} did not start in {self.start_timeout_s:.0f} s")

    def start(self) -> Self:
        """Start the head and the worker nodes and wait until all have joined. A cluster whose
        nodes did not all start is stopped and started once more, on new ports and in a new
        folder, before the error is raised: ``ray start`` gives a node's raylet 30 s to
        register, which a machine busy with other work can miss (seen once in 5 runs of the
        Ray tests beside the rest of the suite), and that is not what the tests test."""
        try:
            return self._start()
        except RuntimeError:
            return self._start()

    def _start(self) -> Self:
        (self.port,) = self._unused_ports(1)
        try:
            self.head = self._spawn(
                "head",
                [
                    "--head",
                    f"--port={self.port}",
                    "--num-cpus=0",
                    "--include-dashboard=false",
                ],
            )
            # the worker nodes start beside the head (each waits for the head to answer)
            added = [self._add() for _ in range(self.workers)]
            for node in [self.head, *added]:
                self._wait_started(node)
            self.wait_nodes(self.workers)
        except BaseException:
            self.stop()
            raise
        return self

    def add_node(self, *, wait: bool = True) -> RayNode:
        """Start one more worker node (it joins the running head); with ``wait``, return once
        it has joined (else call :meth:`wait_joined` later)."""
        node = self._add()
        if wait:
            self.wait_joined(node)
        return node

    def wait_joined(self, node: RayNode) -> None:
        """Wait until ``node`` has started and the head counts every live worker node."""
        self._wait_started(node)
        self.wait_nodes(sum(1 for n in self.nodes if n.alive))

    def _add(self) -> RayNode:
        self._added += 1
        node = self._spawn(
            f"worker{self._added}", [f"--address={self.address}", f"--num-cpus={self.cpus}"]
        )
        self.nodes.append(node)
        return node

    def wait_nodes(self, count: int) -> None:
        """Wait until the head counts ``count`` live worker nodes (nodes with CPUs)."""
        probe = (
            "import sys, time, ray\n"
            "ray.init(address=sys.argv[1], log_to_driver=False, configure_logging=False)\n"
            "deadline = time.monotonic() + float(sys.argv[3])\n"
            "while time.monotonic() < deadline:\n"
            "    live = [n for n in ray.nodes() if n['Alive'] and n['Resources'].get('CPU')]\n"
            "    if len(live) == int(sys.argv[2]):\n"
            "        sys.exit(0)\n"
            "    time.sleep(0.5)\n"
            "sys.exit(1)\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", probe, self.address, str(count), str(self.start_timeout_s)],
            env=ray_env(),
            capture_output=True,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"the cluster did not reach {count} worker node(s)")

    def kill_node(self, index: int) -> None:
        """Kill worker node ``index`` and everything it runs at once (SIGKILL to its process
        group), as when a machine is lost."""
        node = self.nodes[index]
        # Ray starts each worker process in a process group of its own: take the node's
        # whole tree first, then kill it all.
        tree = _descendants(node.process.pid)
        _kill_group(node.process, signal.SIGKILL)
        for pid in tree:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def stop(self) -> None:
        """End every node this object started: SIGTERM (ray's own shutdown), then SIGKILL to
        each node's process group for whatever is left."""
        started = [*self.nodes, *([self.head] if self.head else [])]
        trees = {node.name: _descendants(node.process.pid) for node in started}
        for node in started:
            if node.alive:
                node.process.send_signal(signal.SIGTERM)
        for node in started:
            with contextlib.suppress(subprocess.TimeoutExpired):
                node.process.wait(timeout=20)
            _kill_group(node.process, signal.SIGKILL)
            for pid in trees[node.name]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        self.nodes, self.head = [], None
        for claim in self._claims:
            claim.close()  # the lock goes with it
        self._claims = []
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _kill_group(process: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    """Send ``sig`` to the process group ``process`` leads (it was started in its own
    session); then reap the leader."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, sig)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=10)


def _descendants(root: int) -> list[int]:
    """Every process below ``root`` (read from ``/proc``: this helper is Linux only)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    found: list[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found
