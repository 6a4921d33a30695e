"""PTX tokenizer and the token cursor the parser walks.

One compiled master regex (named alternatives, tried in order) turns the
whole text into tokens in a single `finditer` pass (leading whitespace is
part of each match, halving the matches); a catch-all alternative
at the end means no character is ever skipped silently, so an odd byte
becomes a positioned error instead of vanishing. Opcodes keep their
dot-modifiers in one WORD token (`ld.global.v4.f32`, `cp.async.L2::128B`)
and special-register components stay attached (`%tid.x`), because in PTX a
dot directly after a name always continues that name. Tokens store only a
character offset; line and column are computed by bisection when needed.

Tokens are produced in chunks as the parser asks for them, so an error
near the start of a huge (or binary) text is reported without lexing the
rest. It does not know PTX grammar: directives, types and opcodes are all
just DIRECTIVE or WORD tokens here.
"""
from __future__ import annotations

import bisect
import enum
import re
from typing import Iterator, NamedTuple, NoReturn

from .errors import PTXParseError


class Tok(enum.Enum):
    DIRECTIVE = "directive"  # .entry, .b32, .debug_abbrev
    WORD = "word"            # identifiers and opcodes with modifiers
    REG = "reg"              # %r1, %tid.x
    INT = "int"
    FLOAT = "float"          # 1.5, 2e10
    HEXFLOAT = "hexfloat"    # 0f3F800000, 0d3FF0000000000000
    STRING = "string"
    PUNCT = "punct"
    EOF = "eof"


class Token(NamedTuple):
    kind: Tok
    text: str
    pos: int


_MASTER = re.compile(r"""
  [ \t\r\n\f\v]*
(?:
  (?P<end>\Z)
| (?P<lcomment>//[^\n]*)
| (?P<bcomment>/\*.*?\*/)
| (?P<badcomment>/\*)
| (?P<reg>%[\w$]+(?:\.[A-Za-z_]\w*)?)
| (?P<word>[A-Za-z_$][\w$]*(?:\.[\w$]+(?:::[\w$]+)*)*)
| (?P<punct>[{}()\[\],;:+\-!@|<>=*/~&^%])
| (?P<directive>\.[A-Za-z_][\w$]*(?:::[\w$]+)*)
| (?P<int>(?:0[xX][0-9A-Fa-f]+|0[bB][01]+|\d+)U?(?![\w$.]))
| (?P<hexfloat>0[fFdD][0-9A-Fa-f]*(?![\w$.]))
| (?P<float>(?:\d+\.\d*(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)(?![\w$.]))
| (?P<badnum>\d[\w$.]*)
| (?P<string>"(?:[^"\\\n]|\\.)*")
| (?P<badstring>")
| (?P<bad>.)
)""", re.VERBOSE | re.DOTALL)

_KINDS = {
    "directive": Tok.DIRECTIVE, "word": Tok.WORD, "reg": Tok.REG, "int": Tok.INT,
    "float": Tok.FLOAT, "hexfloat": Tok.HEXFLOAT, "string": Tok.STRING,
    "punct": Tok.PUNCT,
}


_KIND_BY_INDEX: list[Tok | None] = [None] * (_MASTER.groups + 1)
for _name, _index in _MASTER.groupindex.items():
    _KIND_BY_INDEX[_index] = _KINDS.get(_name)


class SourceText:
    """The PTX text with a line index, for turning offsets into positions."""

    def __init__(self, text: str, filename: str) -> None:
        self.text = text
        self.filename = filename
        self._starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line_col(self, pos: int) -> tuple[int, int]:
        i = bisect.bisect_right(self._starts, pos) - 1
        return i + 1, pos - self._starts[i] + 1

    def line_text(self, line: int) -> str:
        start = self._starts[line - 1]
        end = self.text.find("\n", start)
        return self.text[start:] if end < 0 else self.text[start:end]

    def error(self, pos: int, message: str) -> PTXParseError:
        line, col = self.line_col(pos)
        return PTXParseError(self.filename, line, col, message, self.line_text(line))


CHUNK = 4096   # tokens lexed at a time: an error near the start of a huge text is found at once


def token_chunks(src: SourceText) -> Iterator[list[Token]]:
    """The tokens of the text, CHUNK at a time, whitespace and comments
    dropped; the last chunk ends with the EOF token. A lexical error is
    raised when the chunk holding it is asked for."""
    tokens: list[Token] = []
    append = tokens.append
    kinds = _KIND_BY_INDEX
    new = tuple.__new__  # skips NamedTuple's Python-level __new__: tokens are hot
    for m in _MASTER.finditer(src.text):
        index = m.lastindex
        kind = kinds[index]  # type: ignore[index]
        if kind is not None:
            append(new(Token, (kind, m.group(index), m.start(index))))
            if len(tokens) >= CHUNK:
                yield tokens
                tokens = []
                append = tokens.append
            continue
        group = m.lastgroup
        if group in ("end", "lcomment", "bcomment"):
            continue
        if group == "badcomment":
            raise src.error(m.start(group), "unterminated /* comment")
        elif group == "badstring":
            raise src.error(m.start(group), "unterminated string literal")
        elif group == "badnum":
            text = m.group(group)
            text = text if len(text) <= 40 else text[:37] + "..."
            raise src.error(m.start(group), f"malformed number {text!r}")
        else:
            raise src.error(m.start(group), f"unexpected character {m.group(group)!r}")
    append(Token(Tok.EOF, "", len(src.text)))
    yield tokens


def tokenize(src: SourceText) -> list[Token]:
    """Split the whole text into tokens, dropping whitespace and comments."""
    return [tok for chunk in token_chunks(src) for tok in chunk]


class Cursor:
    """A position in the token list with the parser's look-ahead helpers.
    Given chunks instead of a list, it lexes on demand, so parsing stops at
    the first error without lexing the rest of a large text."""

    def __init__(self, src: SourceText, tokens: list[Token] | Iterator[list[Token]]) -> None:
        self.src = src
        self.i = 0
        if isinstance(tokens, list):
            self.toks, self._more = tokens, None
        else:
            self.toks, self._more = [], tokens
            self._fill(0)

    def _fill(self, j: int) -> None:
        """Lex until token j exists (or the EOF token does)."""
        while self._more is not None and j >= len(self.toks):
            chunk = next(self._more, None)
            if chunk is None:
                self._more = None
            else:
                self.toks.extend(chunk)

    def peek(self, ahead: int = 0) -> Token:
        j = self.i + ahead
        if j >= len(self.toks):
            self._fill(j)
        return self.toks[j] if j < len(self.toks) else self.toks[-1]

    def next(self) -> Token:
        tok = self.toks[self.i]
        if tok.kind is not Tok.EOF:
            self.i += 1
            if self.i >= len(self.toks):
                self._fill(self.i)
        return tok

    def at(self, text: str) -> bool:
        tok = self.toks[self.i]
        return tok.text == text and tok.kind in (Tok.PUNCT, Tok.DIRECTIVE)

    def accept(self, text: str) -> Token | None:
        if self.at(text):
            return self.next()
        return None

    def expect(self, text: str, context: str) -> Token:
        if self.at(text):
            return self.next()
        self.fail(f"expected '{text}' {context}")

    def expect_kind(self, kind: Tok, what: str) -> Token:
        tok = self.peek()
        if tok.kind is kind:
            return self.next()
        self.fail(f"expected {what}")

    def fail(self, message: str, tok: Token | None = None) -> NoReturn:
        tok = tok or self.peek()
        found = "end of file" if tok.kind is Tok.EOF else repr(tok.text)
        raise self.src.error(tok.pos, f"{message}, found {found}")

    def error_at(self, tok: Token, message: str) -> PTXParseError:
        return self.src.error(tok.pos, message)
