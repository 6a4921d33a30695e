"""gpudbg's fuzzers: one module per target (api, ptx, devcoredump,
coredump), each with `run(seconds, seed) -> dict`, and the supervisor
`python -m fuzz.run` for long runs (see run.py). Short runs of every target
are part of the test suite."""
