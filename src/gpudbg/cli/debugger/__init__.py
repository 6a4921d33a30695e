"""The `gpudbg debug` / `gpudbg core` debugger front end (cuda-gdb's shape).

Plan of the package: `commands` maps gdb's vocabulary (with unique-prefix
abbreviations and aliases) to handlers; `debugger` owns the Session, the
inferior thread and the focus and runs the stop/resume story; `focus` keeps
the cuda-gdb focus (physical and logical coordinates) consistent;
`breakpoints`, `inspection` and `info` are the command families;
`context` adapts a focused lane to the expression evaluator (`evaluate`,
`formatting`, `values`, `expr`, written separately); `repl` reads lines
from a terminal (prompt_toolkit) or from a pipe.
"""
