"""Occupancy in the driver API: cuOccupancyMaxActiveBlocksPerMultiprocessor
(WithFlags), cuOccupancyMaxPotentialBlockSize(WithFlags),
cuOccupancyAvailableDynamicSMemPerBlock, cuOccupancyMaxPotentialClusterSize
and cuOccupancyMaxActiveClusters.

Every number comes from driver/launch_config.py, the same place the
runtime's mcOccupancy* answers come from, which uses the occupancy rule
the simulator places blocks by, so the two APIs agree with each other and
with the executor. The block-size-to-dynamic-shared-memory callback of
cuOccupancyMaxPotentialBlockSize is a C function pointer, called through
ctypes for each candidate block size. Clusters: the simulator runs every
block as its own cluster, so the largest cluster is 1 and the active
clusters are the resident blocks.
"""
from __future__ import annotations

import ctypes
from typing import Any

from gpudbg import cabi
from gpudbg.cuda_driver._base import R, entry, fail, require_init
from gpudbg.cuda_driver.launch import CUlaunchConfig, check_cluster
from gpudbg.cuda_driver.module import function_of, need
from gpudbg.driver import launch_config as _cfg
from gpudbg.sim import cluster as sim_cluster

__all__ = ["cuOccupancyMaxActiveBlocksPerMultiprocessor", "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
           "cuOccupancyMaxPotentialBlockSize", "cuOccupancyMaxPotentialBlockSizeWithFlags",
           "cuOccupancyAvailableDynamicSMemPerBlock", "cuOccupancyMaxPotentialClusterSize",
           "cuOccupancyMaxActiveClusters"]

B2D_SIZE = ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_int)
ATTRIBUTE_BYTES = 72
CLUSTER_DIMENSION = 4


@entry
def cuOccupancyMaxActiveBlocksPerMultiprocessor(numBlocks: int, func: int, blockSize: int,
                                                dynamicSMemSize: int) -> None:
    """Resident blocks per SM (0 when this configuration cannot launch)."""
    need(numBlocks, "numBlocks")
    require_init()
    cabi.store(numBlocks, "i32", _cfg.blocks_per_sm(function_of(func), int(blockSize), int(dynamicSMemSize)))


@entry
def cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks: int, func: int, blockSize: int,
                                                         dynamicSMemSize: int, flags: int) -> None:
    """CU_OCCUPANCY_DEFAULT or CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE (the
    same answer: caching never changes occupancy here)."""
    need(numBlocks, "numBlocks")
    require_init()
    cabi.store(numBlocks, "i32", _cfg.blocks_per_sm(function_of(func), int(blockSize), int(dynamicSMemSize),
                                                    int(flags)))


def _potential(minGridSize: int, blockSize: int, func: int, callback: int, dynamicSMemSize: int,
               blockSizeLimit: int, flags: int) -> None:
    need(minGridSize, "minGridSize")
    need(blockSize, "blockSize")
    require_init()
    f = function_of(func)
    if callback:
        c_fn = B2D_SIZE(int(callback))
        smem: Any = lambda b: int(c_fn(b))  # noqa: E731
    else:
        smem = int(dynamicSMemSize)
    grid, block = _cfg.max_potential_block_size(f, smem, int(blockSizeLimit), int(flags))
    cabi.store(minGridSize, "i32", grid)
    cabi.store(blockSize, "i32", block)


@entry
def cuOccupancyMaxPotentialBlockSize(minGridSize: int, blockSize: int, func: int, blockSizeToDynamicSMemSize: int,
                                     dynamicSMemSize: int, blockSizeLimit: int) -> None:
    """The block size of maximum occupancy and the grid that fills the
    device; dynamic shared memory is dynamicSMemSize, or the callback's
    answer for each block size when it is not NULL."""
    _potential(minGridSize, blockSize, func, blockSizeToDynamicSMemSize, dynamicSMemSize, blockSizeLimit, 0)


@entry
def cuOccupancyMaxPotentialBlockSizeWithFlags(minGridSize: int, blockSize: int, func: int,
                                              blockSizeToDynamicSMemSize: int, dynamicSMemSize: int,
                                              blockSizeLimit: int, flags: int) -> None:
    _potential(minGridSize, blockSize, func, blockSizeToDynamicSMemSize, dynamicSMemSize, blockSizeLimit, flags)


@entry
def cuOccupancyAvailableDynamicSMemPerBlock(dynamicSmemSize: int, func: int, numBlocks: int,
                                            blockSize: int) -> None:
    """The most dynamic shared memory per block with which numBlocks blocks
    are still resident on one SM."""
    need(dynamicSmemSize, "dynamicSmemSize")
    require_init()
    cabi.store(dynamicSmemSize, "u64", _cfg.available_dynamic_shared(function_of(func), int(numBlocks),
                                                                     int(blockSize)))


def _config(config: int, f: Any) -> tuple[CUlaunchConfig, tuple[int, int, int] | None]:
    """The launch configuration and its cluster shape: the CLUSTER_DIMENSION
    attribute, else the kernel's __cluster_dims__, else None."""
    cfg = cabi.struct_at(need(config, "config"), CUlaunchConfig, "config")
    grid = (cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ)
    dims = None
    for i in range(cfg.numAttrs):
        raw = cabi.read(need(cfg.attrs or 0, "config->attrs") + i * ATTRIBUTE_BYTES, ATTRIBUTE_BYTES,
                        "config->attrs")
        if int.from_bytes(raw[0:4], "little") == CLUSTER_DIMENSION:
            dims = tuple(int.from_bytes(raw[8 + 4 * j:12 + 4 * j], "little") for j in range(3))
            check_cluster(i, dims, grid, "cluster dimension")      # type: ignore[arg-type]
    required = (getattr(f.kernel, "directives", None) or {}).get("reqnctapercluster")
    return cfg, dims or (tuple((tuple(required) + (1, 1))[:3]) if required else None)


def _per_sm(f: Any, cfg: CUlaunchConfig) -> int:
    return _cfg.blocks_per_sm(f, int(cfg.blockDimX * cfg.blockDimY * cfg.blockDimZ), int(cfg.sharedMemBytes))


@entry
def cuOccupancyMaxPotentialClusterSize(clusterSize: int, func: int, config: int) -> None:
    """The largest portable cluster (at most 8 blocks) of which one can be
    resident in a GPC with the config's block and shared size (0 when not
    even one block fits)."""
    need(clusterSize, "clusterSize")
    require_init()
    f = function_of(func)
    cfg, _dims = _config(config, f)
    per_sm, sms = _per_sm(f, cfg), f.module.context.device.model.sm_count
    fits = [n for n in range(1, sim_cluster.PORTABLE_CLUSTER_SIZE + 1)
            if per_sm and sim_cluster.clusters_per_wave(sms, per_sm, (n, 1, 1))]
    cabi.store(clusterSize, "i32", max(fits, default=0))


@entry
def cuOccupancyMaxActiveClusters(numClusters: int, func: int, config: int) -> None:
    """Clusters of the config's shape (one block without one) that can be
    resident at once: whole clusters per GPC, summed (sim/cluster.py)."""
    need(numClusters, "numClusters")
    require_init()
    f = function_of(func)
    cfg, dims = _config(config, f)
    per_sm, sms = _per_sm(f, cfg), f.module.context.device.model.sm_count
    cabi.store(numClusters, "i32", sim_cluster.clusters_per_wave(sms, per_sm, dims or (1, 1, 1)) if per_sm else 0)
