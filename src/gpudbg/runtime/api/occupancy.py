"""Seed 002 §2.6: occupancy.

Every answer is computed by driver/launch_config.py from the device model
and the translated kernel's footprint with the same occupancy rule the
simulator uses to place blocks, so `blocks_per_sm` in mc.last_launch_stats()
equals mcOccupancyMaxActiveBlocksPerMultiprocessor for the same
configuration. `f` is the mcFunction_t of mcModuleGetFunction; a handle that
is not a loaded device function is mcErrorInvalidDeviceFunction.
"""
from __future__ import annotations


from gpudbg.driver import launch_config as _cfg
from gpudbg.runtime.api._args import DeviceFunction, Flags, Int32, SharedMemOfBlockSize, Size
from gpudbg.runtime.api._base import _api, _ctx


@_api(1)
def mcOccupancyMaxActiveBlocksPerMultiprocessor(f: DeviceFunction, blockSize: Int32, dynamicSMemSize: Size) -> int:
    """Seed 002 §2.6.3.3: resident blocks per SM (0 if this configuration
    cannot launch)."""
    _ctx()
    return _cfg.blocks_per_sm(_cfg.check_function(f), blockSize, dynamicSMemSize)


@_api(1)
def mcOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(f: DeviceFunction, blockSize: Int32, dynamicSMemSize: Size,
                                                         flags: Flags) -> int:
    """Seed 002 §2.6.3.4: flags mcOccupancyDefault or
    mcOccupancyDisableCachingOverride (caching never affects occupancy on
    the simulated device, so both give the same answer)."""
    _ctx()
    return _cfg.blocks_per_sm(_cfg.check_function(f), blockSize, dynamicSMemSize, flags)


@_api(1)
def mcModuleOccupancyMaxActiveBlocksPerMultiprocessor(f: DeviceFunction, blockSize: Int32,
                                                      dynamicSMemSize: Size) -> int:
    """Seed 002 §2.6.3.1: the same for a module function handle."""
    _ctx()
    return _cfg.blocks_per_sm(_cfg.check_function(f), blockSize, dynamicSMemSize)


@_api(2)
def mcOccupancyMaxPotentialBlockSize(f: DeviceFunction, dynSharedMemPerBlk: SharedMemOfBlockSize,
                                     blockSizeLimit: Int32) -> tuple[int, int]:
    """Seed 002 §2.6.3.5: (gridSize, blockSize) of maximum occupancy;
    dynSharedMemPerBlk is bytes or a function of the block size (CUDA's
    ...VariableSMem form); blockSizeLimit 0 means no limit."""
    _ctx()
    return _cfg.max_potential_block_size(_cfg.check_function(f), dynSharedMemPerBlk, blockSizeLimit)


@_api(2)
def mcOccupancyMaxPotentialBlockSizeWithFlags(f: DeviceFunction, dynSharedMemPerBlk: SharedMemOfBlockSize,
                                              blockSizeLimit: Int32, flags: Flags) -> tuple[int, int]:
    """Seed 002 §2.6.3.6: as mcOccupancyMaxPotentialBlockSize, with flags."""
    _ctx()
    return _cfg.max_potential_block_size(_cfg.check_function(f), dynSharedMemPerBlk, blockSizeLimit, flags)


@_api(1)
def mcOccupancyAvailableDynamicSMemPerBlock(f: DeviceFunction, numBlocks: Int32, blockSize: Int32) -> int:
    """Seed 002 §2.6.3.2: the most dynamic shared memory per block with
    which numBlocks blocks of blockSize threads are still resident on one SM."""
    _ctx()
    return _cfg.available_dynamic_shared(_cfg.check_function(f), numBlocks, blockSize)


__all__ = ['mcOccupancyMaxActiveBlocksPerMultiprocessor', 'mcOccupancyMaxActiveBlocksPerMultiprocessorWithFlags',
           'mcModuleOccupancyMaxActiveBlocksPerMultiprocessor', 'mcOccupancyMaxPotentialBlockSize',
           'mcOccupancyMaxPotentialBlockSizeWithFlags', 'mcOccupancyAvailableDynamicSMemPerBlock']
