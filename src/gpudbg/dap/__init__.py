"""gpudbg's Debug Adapter Protocol server (`gpudbg dap`): the CLI
debugger behind the protocol editors speak.

framing (Content-Length messages), protocol (capabilities, exception
filters, message shapes, as data), server (the request table and the
transports), engine (the CLI Debugger run from an execution thread),
threads / stack / variables / breakpoints / memory (the requests), hits
and logpoints (breakpoint options), output (program and debugger text as
output events).
"""
