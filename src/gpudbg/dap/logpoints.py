"""DAP logpoint messages: text with `{expression}` parts, rendered per
thread that reaches the logpoint (`{{` and `}}` are literal braces).

The one idea: the template is parsed once, when the breakpoint is set,
into literal and expression parts, so a malformed message is refused
right away (the breakpoint is unverified with the reason) instead of
failing on the device; each expression is evaluated with the CLI's
evaluator in the arriving lane's context.
"""
from __future__ import annotations

from typing import Any, Callable


class TemplateError(ValueError):
    pass


def parse(text: str) -> list[tuple[bool, str]]:
    """[(is_expression, text), ...]"""
    parts: list[tuple[bool, str]] = []
    buf: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "{" and i + 1 < n and text[i + 1] == "{":
            buf.append("{")
            i += 2
        elif c == "}" and i + 1 < n and text[i + 1] == "}":
            buf.append("}")
            i += 2
        elif c == "{":
            end = text.find("}", i + 1)
            if end < 0:
                raise TemplateError(f"log message: '{{' at column {i + 1} is never closed")
            expr = text[i + 1:end].strip()
            if not expr:
                raise TemplateError(f"log message: empty {{}} at column {i + 1}")
            if buf:
                parts.append((False, "".join(buf)))
                buf = []
            parts.append((True, expr))
            i = end + 1
        elif c == "}":
            raise TemplateError(f"log message: unmatched '}}' at column {i + 1} (write '}}}}' for a brace)")
        else:
            buf.append(c)
            i += 1
    if buf:
        parts.append((False, "".join(buf)))
    return parts


def render(parts: list[tuple[bool, str]], value_of: Callable[[str], str]) -> str:
    out = []
    for is_expr, text in parts:
        if not is_expr:
            out.append(text)
            continue
        try:
            out.append(value_of(text))
        except Exception as e:   # one bad expression does not lose the rest of the line
            out.append(f"<error: {getattr(e, 'message', None) or e}>")
    return "".join(out)


def check(parts: list[tuple[bool, str]]) -> None:
    """Each expression parses (the evaluator's grammar)."""
    from gpudbg.cli.debugger.expr import parse as parse_expr
    for is_expr, text in parts:
        if is_expr:
            try:
                parse_expr(text)
            except Exception as e:
                raise TemplateError(f"log message: {{{text}}}: {getattr(e, 'message', None) or e}") from None


def lane_value(ctx: Any) -> Callable[[str], str]:
    from gpudbg.cli.debugger.evaluate import evaluate
    from gpudbg.cli.debugger.formatting import format_value
    return lambda expr: format_value(evaluate(expr, ctx), None, ctx)
