"""The mc* names of the JIT and linker options (seed 002 §2.12), numbered
as CUDA's CUjit_option / CUjitInputType / CUjit_cacheMode / CUjit_fallback,
which the engine uses (gpudbg.driver.types); the numbers pass through
unchanged. This module holds no behaviour.
"""
from __future__ import annotations

import enum


class mcJitOption(enum.IntEnum):
    mcJitMaxRegisters = 0
    mcJitThreadsPerBlock = 1
    mcJitWallTime = 2
    mcJitInfoLogBuffer = 3
    mcJitInfoLogBufferSizeBytes = 4
    mcJitErrorLogBuffer = 5
    mcJitErrorLogBufferSizeBytes = 6
    mcJitOptimizationLevel = 7
    mcJitTargetFromContext = 8
    mcJitTarget = 9
    mcJitFallbackStrategy = 10
    mcJitGenerateDebugInfo = 11
    mcJitLogVerbose = 12
    mcJitGenerateLineInfo = 13
    mcJitCacheMode = 14
    mcJitNewSm3xOpt = 15
    mcJitFastCompile = 16
    mcJitGlobalSymbolNames = 17
    mcJitGlobalSymbolAddresses = 18
    mcJitGlobalSymbolCount = 19
    mcJitLto = 20
    mcJitFtz = 21
    mcJitPrecDiv = 22
    mcJitPrecSqrt = 23
    mcJitFma = 24
    mcJitReferencedKernelNames = 25
    mcJitReferencedKernelCount = 26
    mcJitReferencedVariableNames = 27
    mcJitReferencedVariableCount = 28
    mcJitOptimizeUnusedDeviceVariables = 29
    mcJitPositionIndependentCode = 30
    mcJitMinCtaPerSm = 31
    mcJitMaxThreadsPerBlock = 32
    mcJitOverrideDirectiveValues = 33


class mcJitInputType(enum.IntEnum):
    """CUjitInputType numbering."""
    mcJitInputCubin = 0
    mcJitInputPtx = 1
    mcJitInputFatBinary = 2
    mcJitInputObject = 3
    mcJitInputLibrary = 4
    mcJitInputNvvm = 5


class mcJitCacheMode(enum.IntEnum):
    mcJitCacheOptionNone = 0
    mcJitCacheOptionCg = 1
    mcJitCacheOptionCa = 2


class mcJitFallback(enum.IntEnum):
    mcPreferPtx = 0
    mcPreferBinary = 1
