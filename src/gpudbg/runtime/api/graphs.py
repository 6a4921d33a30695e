"""Graphs produced by stream capture — gpudbg extensions with CUDA's names.

Seed 002 lists no graph functions, yet mcStreamEndCapture returns an
mcGraph_t; these extensions make that graph usable, with the signatures of
the cuda* twins: mcGraphInstantiate, mcGraphLaunch, mcGraphDestroy,
mcGraphExecDestroy, mcGraphGetNodes. A launch replays exactly the commands
the capture recorded (driver/graph.py). Invalid graph or exec handles are
mcErrorInvalidValue, as in CUDA.
"""
from __future__ import annotations

from gpudbg.driver.graph import GraphExec, check_exec, check_graph
from gpudbg.runtime.api._args import Flags, mcGraph_t, mcGraphExec_t, mcStream_t
from gpudbg.runtime.api._base import _api, _ctx
from gpudbg.runtime.errors import McError, mcError_t


@_api(1)
def mcGraphInstantiate(graph: mcGraph_t, flags: Flags = 0) -> GraphExec:
    """gpudbg extension (cudaGraphInstantiate): an executable graph; flags must be 0."""
    ctx = _ctx()
    if flags != 0:
        raise McError(mcError_t.mcErrorInvalidValue, f"flags must be 0, got {flags}")
    return GraphExec(check_graph(ctx, graph))


@_api(0)
def mcGraphLaunch(graphExec: mcGraphExec_t, stream: mcStream_t = None) -> None:
    """gpudbg extension (cudaGraphLaunch): replay the graph's commands in
    `stream`, in a topological order of its nodes."""
    ctx = _ctx()
    check_exec(ctx, graphExec).launch(ctx.stream(stream))


@_api(0)
def mcGraphExecDestroy(graphExec: mcGraphExec_t) -> None:
    """gpudbg extension (cudaGraphExecDestroy): returns at once; memory goes
    when its launches have finished."""
    check_exec(_ctx(), graphExec).destroy()


@_api(0)
def mcGraphDestroy(graph: mcGraph_t) -> None:
    """gpudbg extension (cudaGraphDestroy): execs instantiated from it stay valid."""
    check_graph(_ctx(), graph).destroy()


@_api(2)
def mcGraphGetNodes(graph: mcGraph_t) -> tuple[tuple, int]:
    """gpudbg extension (cudaGraphGetNodes): (nodes, numNodes) in capture order."""
    g = check_graph(_ctx(), graph)
    return tuple(g.nodes), len(g.nodes)


__all__ = ['mcGraphInstantiate', 'mcGraphLaunch', 'mcGraphExecDestroy', 'mcGraphDestroy', 'mcGraphGetNodes']
