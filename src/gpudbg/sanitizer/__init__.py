"""gpudbg's sanitizer: compute-sanitizer's tools over the simulator's
instrumentation interface (sim/instrument.py).

Each tool (memcheck's additions, racecheck, initcheck, synccheck) is a
`sim.instrument.Tool` that keeps shadow state in numpy arrays and turns
what it sees into `Finding`s; a `Reporter` prints them in
compute-sanitizer's shape and wording, applies the print limit and counts
errors; `session.start(config)` installs the tools a `CheckConfig` asks for
and `session.finish()` adds what is only known at exit (leaks). The
simulator's own precise faults (memcheck's core) stay where they are, in
the executor; the CLI (`gpudbg check`) merges both into one summary.
Nothing here runs unless `gpudbg check` (or a test) starts a session.
"""
