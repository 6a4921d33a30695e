"""The command vocabulary: name -> handler, with gdb's abbreviation rules.

The one idea: gdb resolves a command word by exact name, then by alias,
then by unique prefix among the full names, and a prefix shared by several
commands is an error naming them. The same rule resolves subcommand words
(`i cu thr` is `info cuda threads`), so `resolve_word` is used by every
command family, and the table also yields the nested completion
vocabulary for the REPL. The table knows nothing about what the commands
do; handlers take the rest of the line.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterable

_WORD = re.compile(r"\s*([A-Za-z_][\w-]*|!)")


class CommandError(Exception):
    """A command that cannot be carried out; the message is what gdb would
    print (without a trailing period convention being enforced)."""


@dataclass(frozen=True)
class Command:
    name: str
    handler: Callable[[str], None]
    help: str
    aliases: tuple[str, ...] = ()
    repeatable: bool = False          # an empty line repeats it (gdb: next, step, x, ...)
    completions: dict | None = field(default=None, compare=False)   # nested completer words


def resolve_word(word: str, choices: Iterable[str], what: str = "command",
                 aliases: dict[str, str] | None = None) -> str:
    """The choice `word` names: exact, alias, or unique prefix."""
    names = list(choices)
    if word in names:
        return word
    if aliases and word in aliases:
        return aliases[word]
    hits = sorted(n for n in names if n.startswith(word))
    if len(hits) == 1:
        return hits[0]
    if not hits:
        if what == "command":
            raise CommandError(f'Undefined command: "{word}".  Try "help".')
        raise CommandError(f'Undefined {what}: "{word}".  Valid choices: {", ".join(sorted(names))}.')
    raise CommandError(f'Ambiguous {what} "{word}": {", ".join(hits)}.')


class CommandTable:
    """Commands by name and alias."""

    def __init__(self) -> None:
        self._commands: dict[str, Command] = {}
        self._aliases: dict[str, str] = {}

    def add(self, command: Command) -> None:
        if command.name in self._commands or command.name in self._aliases:
            raise ValueError(f"command {command.name!r} is defined twice")
        self._commands[command.name] = command
        for a in command.aliases:
            if a in self._aliases or a in self._commands:
                raise ValueError(f"alias {a!r} of {command.name!r} is already taken")
            self._aliases[a] = command.name

    def __iter__(self):
        return iter(self._commands.values())

    def __contains__(self, name: str) -> bool:
        return name in self._commands

    def get(self, name: str) -> Command:
        return self._commands[name]

    def lookup(self, word: str) -> Command:
        return self._commands[resolve_word(word, self._commands, "command", self._aliases)]

    def split(self, line: str) -> tuple[Command, str]:
        """The command a line names and the rest of the line (`p/x v` gives
        print and `/x v`: the command word ends at the first character that
        cannot be part of a name)."""
        m = _WORD.match(line)
        if m is None:
            raise CommandError(f'Undefined command: "{line.strip()}".  Try "help".')
        return self.lookup(m.group(1)), line[m.end():].strip()

    def vocabulary(self) -> dict:
        """Nested completion words: command (and alias) -> subwords."""
        out: dict = {}
        for c in self._commands.values():
            out[c.name] = c.completions
        for a, name in self._aliases.items():
            out[a] = self._commands[name].completions
        return out

    def help_text(self, word: str = "") -> str:
        if word:
            c = self.lookup(word)
            alias = f" (aliases: {', '.join(c.aliases)})" if c.aliases else ""
            return f"{c.name}{alias} -- {c.help}"
        width = max(len(c.name) for c in self._commands.values())
        return "\n".join(f"{c.name:<{width}} -- {c.help}" for c in sorted(self._commands.values(),
                                                                      key=lambda c: c.name))
