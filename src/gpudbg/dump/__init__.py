"""GPU crash dumps: the drm/msm devcoredump text format (write, parse,
analyze) and the per-dword ascii85 codec it uses.

Everything here works on files and in-memory models only; nothing imports
the simulator, so reading a dump from a real device never needs a GPU.
"""
