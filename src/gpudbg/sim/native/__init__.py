"""The native engine: PTX straight-line code compiled to host machine code
through LLVM (llvmlite), beside the interpreter, with every check kept.

The interpreter (sim/ops) stays the reference and the executor's step loop
stays in charge: it picks the threads of each step, and where a step's
straight-line instructions form a compiled segment it calls one native
function over those threads instead of one numpy closure per instruction.
Segments are cut so that running them thread by thread is
indistinguishable from the interpreter's order (segments.py), every access
is checked against the same allocation table, and any failed check hands
the segment back to the interpreter, so fault reports are the
interpreter's own. Modules: emit.py (the segment ABI and emitter),
lower_*.py (lowerings per instruction family), special.py, environment.py
(what a wave passes to native code), segments.py, jit.py (LLVM),
engine.py (choice, compile, call).
"""
