"""Graphs made by stream capture, their executable form, and their replay.

A node is what one captured call produced: a batch of ring commands exactly
as the stream would have pushed them (a launch with its descriptor, a copy,
a memset, a stream memory op), or one of the three things that are not
plain commands: an external event record, an external event wait and a host
function. Replay walks the nodes in a topological order (dependencies
first, ties by capture order) and pushes each batch, unchanged, into the
launch stream: a serial schedule that honours every edge, so a launched
graph runs the very commands the capture saw. Driver memory the commands
point at (launch descriptors with their parameters) is owned by the graph's
GraphResources, shared with every exec instantiated from it, and freed once
the last owner is gone and every launch that used it has retired; the
resources also hold the events the graph records (their timestamp slots
outlive mcEventDestroy while a graph may still record them) and the pins of
semaphores its captured waits read (driver/fence.py). Destroying a graph or
an exec with launches in flight is legal and returns at once.

Not modelled: graph editing APIs (add/remove nodes), child graphs, exec
update; a graph launched into a capturing stream is recorded node by node.
"""
from __future__ import annotations

import enum
import itertools
from typing import Any, Iterable

from gpudbg.driver import commands as C
from gpudbg.driver.fence import Marker
from gpudbg.driver.status import CUresult, EngineError

_node_ids = itertools.count(1)
_graph_ids = itertools.count(1)


class NodeKind(enum.Enum):
    KERNEL = "kernel"
    MEMCPY = "memcpy"
    MEMSET = "memset"
    MEM_OP = "stream memory operation"
    WAIT = "semaphore wait"
    EMPTY = "empty"
    EVENT_RECORD = "event record"
    WAIT_EVENT = "event wait"
    HOST = "host function"


_OPCODE_KIND = {C.Opcode.LAUNCH: NodeKind.KERNEL, C.Opcode.COPY: NodeKind.MEMCPY,
                C.Opcode.MEMSET: NodeKind.MEMSET, C.Opcode.WAIT_VALUE: NodeKind.MEM_OP,
                C.Opcode.WRITE_VALUE: NodeKind.MEM_OP, C.Opcode.SEM_ACQUIRE: NodeKind.WAIT}


def kind_of(commands: list[C.Command]) -> NodeKind:
    for cmd in commands:
        kind = _OPCODE_KIND.get(cmd.opcode)
        if kind is None and "COPY" in cmd.opcode.name:
            kind = NodeKind.MEMCPY
        elif kind is None and "MEMSET" in cmd.opcode.name:
            kind = NodeKind.MEMSET
        if kind is not None:
            return kind
    return NodeKind.EMPTY


class GraphNode:
    """mcGraphNode_t."""

    def __init__(self, graph: "Graph", kind: NodeKind, deps: Iterable["GraphNode"],
                 commands: list[C.Command] | None = None, **payload: Any):
        self.id = next(_node_ids)
        self.graph = graph
        self.kind = kind
        self.dependencies: tuple[GraphNode, ...] = tuple(dict.fromkeys(deps))
        self.commands = list(commands or [])
        self.payload = payload

    def __repr__(self) -> str:
        return f"<mcGraphNode {self.id} ({self.kind.value})>"


class GraphResources:
    """Driver allocations captured commands refer to, with their owners
    (graph, execs) and the fences of launches that used them. They are the
    context's driver memory: destroying the context (mcDeviceReset) frees
    them even while a graph or exec handle is still alive (it is refused
    from then on as another context's)."""

    def __init__(self, context: Any):
        self.context = context
        self.allocations: list[Any] = []   # allocations, or functions to call (semaphore unpins)
        self.events: list[Any] = []        # events held (Event.hold) for event-record nodes
        self.owners = 0
        self.launches = Marker()
        context.teardown_hooks.append(self._free)

    def acquire(self) -> None:
        self.owners += 1

    def release(self) -> None:
        self.owners -= 1
        if self.owners > 0:
            return
        self._free()

    def _free(self) -> None:
        """Once every launch that used them retired (at once when the
        context is gone: its work was discarded)."""
        ctx = self.context
        try:
            ctx.teardown_hooks.remove(self._free)
        except ValueError:       # the context's teardown runs (or ran) it
            pass
        events, self.events = self.events, []
        for e in events:
            e.release()
        with ctx.lock:
            allocations, self.allocations = self.allocations, []
            for what in allocations:
                ctx.defer(_MarkerFence(self.launches), 0, what)
        ctx.reap()


class _MarkerFence:
    """Lets Context.reap treat 'every launch retired' like one fence."""

    def __init__(self, marker: Marker):
        self.marker = marker

    def reached(self, _value: int) -> bool:
        return self.marker.reached()


class Graph:
    """mcGraph_t: nodes in capture order."""

    def __init__(self, context: Any):
        self.id = next(_graph_ids)
        self.context = context
        self.nodes: list[GraphNode] = []
        self.resources = GraphResources(context)
        self.resources.acquire()
        self.destroyed = False

    def __repr__(self) -> str:
        return f"<mcGraph {self.id}: {len(self.nodes)} nodes>"

    def add(self, kind: NodeKind, deps: Iterable[GraphNode], commands: list[C.Command] | None = None,
            **payload: Any) -> GraphNode:
        node = GraphNode(self, kind, deps, commands, **payload)
        self.nodes.append(node)
        event = payload.get("event")
        if kind is NodeKind.EVENT_RECORD and event is not None:
            event.hold()
            self.resources.events.append(event)
        return node

    def adopt(self, allocation: Any) -> None:
        self.resources.allocations.append(allocation)

    def topological_order(self) -> list[GraphNode]:
        """Dependencies first; among ready nodes, capture order."""
        index = {n: i for i, n in enumerate(self.nodes)}
        remaining = {n: sum(1 for d in n.dependencies if d in index) for n in self.nodes}
        users: dict[GraphNode, list[GraphNode]] = {n: [] for n in self.nodes}
        for n in self.nodes:
            for d in n.dependencies:
                if d in users:
                    users[d].append(n)
        ready = sorted((n for n, k in remaining.items() if k == 0), key=index.__getitem__)
        order: list[GraphNode] = []
        while ready:
            n = ready.pop(0)
            order.append(n)
            for u in users[n]:
                remaining[u] -= 1
                if remaining[u] == 0:
                    ready.append(u)
            ready.sort(key=index.__getitem__)
        return order

    def destroy(self) -> None:
        if not self.destroyed:
            self.destroyed = True
            self.resources.release()


class GraphExec:
    """mcGraphExec_t: a frozen replay order of a graph."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.context = graph.context
        self.order = graph.topological_order()
        self.resources = graph.resources
        self.resources.acquire()
        self.destroyed = False

    def __repr__(self) -> str:
        return f"<mcGraphExec of graph {self.graph.id}: {len(self.order)} nodes>"

    def launch(self, stream: Any) -> None:
        """Push every node, in order, into `stream`."""
        from gpudbg.driver import callbacks
        batch: list[C.Command] = []

        def flush() -> None:
            if batch:
                stream.submit(list(batch))
                batch.clear()

        for node in self.order:
            if node.commands:
                batch.extend(node.commands)
                continue
            flush()
            if node.kind is NodeKind.EVENT_RECORD:
                node.payload["event"].record(stream)
            elif node.kind is NodeKind.WAIT_EVENT:
                node.payload["event"].make_wait(stream)
            elif node.kind is NodeKind.HOST:
                callbacks.enqueue(stream, node.payload["host_kind"], node.payload["fn"],
                                  node.payload["user_data"], node.payload["handle"])
        flush()
        if stream.capture is None:
            with self.context.lock:
                self.resources.launches = self.resources.launches.merged(stream.channel.marker())

    def destroy(self) -> None:
        if not self.destroyed:
            self.destroyed = True
            self.resources.release()


def check_graph(context: Any, handle: Any) -> Graph:
    if not isinstance(handle, Graph) or handle.destroyed:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"{handle!r} is not a live graph")
    if handle.context is not context:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"{handle!r} belongs to another context")
    return handle


def check_exec(context: Any, handle: Any) -> GraphExec:
    if not isinstance(handle, GraphExec) or handle.destroyed:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"{handle!r} is not a live graph exec")
    if handle.context is not context:
        raise EngineError(CUresult.CUDA_ERROR_INVALID_VALUE, f"{handle!r} belongs to another context")
    return handle
