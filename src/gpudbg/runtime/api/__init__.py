"""The mc* functions, one module per section of seed 002; `gpudbg.runtime.mc`
collects them into the public namespace."""
