"""Stream capture and graph launch of the runtime's C ABI: cudaStreamBeginCapture,
EndCapture, IsCapturing, cudaThreadExchangeStreamCaptureMode,
cudaGraphInstantiate(WithFlags), cudaGraphLaunch, cudaGraphExecDestroy,
cudaGraphDestroy (+ the _ptsz variants), each over its mc* twin.

Graphs and executable graphs are the engine's (gpudbg.driver.graph, made by
the engine's capture), named by cabi.handles numbers of the driver API's
kinds ("CUgraph", "CUgraphExec"), so a captured cudaGraph_t is a valid
CUgraph. Building graphs node by node (cudaGraphAdd*Node) is not here.
"""
from __future__ import annotations

from gpudbg import cabi
from gpudbg.cabi import handles
from gpudbg.cuda_driver._base import HandleKind
from gpudbg.cuda_runtime._base import E, call, export, fail, need, per_thread, stream
from gpudbg.runtime import mc

__all__ = ["cudaStreamBeginCapture", "cudaStreamBeginCapture_ptsz", "cudaStreamEndCapture",
           "cudaStreamEndCapture_ptsz", "cudaStreamIsCapturing", "cudaStreamIsCapturing_ptsz",
           "cudaThreadExchangeStreamCaptureMode", "cudaGraphInstantiate", "cudaGraphInstantiateWithFlags",
           "cudaGraphLaunch", "cudaGraphLaunch_ptsz", "cudaGraphExecDestroy", "cudaGraphDestroy"]


def _graph(number: int):
    if not int(number):
        raise fail(E.mcErrorInvalidValue, "cudaGraph_t is NULL")
    return handles.lookup(HandleKind.GRAPH, int(number))


def _exec(number: int):
    if not int(number):
        raise fail(E.mcErrorInvalidValue, "cudaGraphExec_t is NULL")
    return handles.lookup(HandleKind.GRAPH_EXEC, int(number))


@export
def cudaStreamBeginCapture(s: int, mode: int) -> None:
    call(mc.mcStreamBeginCapture, stream(s), int(mode))


@export
def cudaStreamEndCapture(s: int, pGraph: int) -> None:
    need(pGraph, "pGraph")
    graph = call(mc.mcStreamEndCapture, stream(s))
    cabi.store(pGraph, "u64", handles.handle(HandleKind.GRAPH, graph) if graph is not None else 0)


@export
def cudaStreamIsCapturing(s: int, pCaptureStatus: int) -> None:
    need(pCaptureStatus, "pCaptureStatus")
    cabi.store(pCaptureStatus, "i32", int(call(mc.mcStreamIsCapturing, stream(s))))


@export
def cudaThreadExchangeStreamCaptureMode(mode: int) -> None:
    need(mode, "mode")
    old = call(mc.mcThreadExchangeStreamCaptureMode, int(cabi.load(mode, "i32")))
    cabi.store(mode, "i32", int(old))


def _instantiate(pGraphExec: int, graph: int, flags: int) -> None:
    need(pGraphExec, "pGraphExec")
    graph_exec = call(mc.mcGraphInstantiate, _graph(graph), int(flags))
    cabi.store(pGraphExec, "u64", handles.handle(HandleKind.GRAPH_EXEC, graph_exec))


@export
def cudaGraphInstantiate(pGraphExec: int, graph: int, flags: int) -> None:
    _instantiate(pGraphExec, graph, flags)


@export
def cudaGraphInstantiateWithFlags(pGraphExec: int, graph: int, flags: int) -> None:
    _instantiate(pGraphExec, graph, flags)


@export
def cudaGraphLaunch(graphExec: int, s: int) -> None:
    call(mc.mcGraphLaunch, _exec(graphExec), stream(s))


@export
def cudaGraphExecDestroy(graphExec: int) -> None:
    call(mc.mcGraphExecDestroy, _exec(graphExec))
    handles.forget(HandleKind.GRAPH_EXEC, graphExec)


@export
def cudaGraphDestroy(graph: int) -> None:
    call(mc.mcGraphDestroy, _graph(graph))
    handles.forget(HandleKind.GRAPH, graph)


cudaStreamBeginCapture_ptsz = per_thread(cudaStreamBeginCapture, "cudaStreamBeginCapture_ptsz", 0)
cudaStreamEndCapture_ptsz = per_thread(cudaStreamEndCapture, "cudaStreamEndCapture_ptsz", 0)
cudaStreamIsCapturing_ptsz = per_thread(cudaStreamIsCapturing, "cudaStreamIsCapturing_ptsz", 0)
cudaGraphLaunch_ptsz = per_thread(cudaGraphLaunch, "cudaGraphLaunch_ptsz", 1)
