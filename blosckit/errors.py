"""The two exceptions every public function may raise for bad input."""
from __future__ import annotations

from typing import Any


class FormatError(ValueError):
    """Malformed input.

    ``offset`` is the byte offset into the input where the problem was found
    (for input that ends too early: the input length, where the missing bytes
    should start); ``path`` names the structure, e.g. ``chunk.header.blocksize``.
    ``rule`` is the id of the rule in ``specs/`` when one applies.
    """

    def __init__(self, message: str, offset: int, path: str, *, rule: str | None = None,
                 expected: Any = None, actual: Any = None) -> None:
        self.message = message
        self.offset = int(offset)
        self.path = path
        self.rule = rule
        self.expected = expected
        self.actual = actual
        super().__init__(message)

    def __str__(self) -> str:
        rule = f" [{self.rule}]" if self.rule else ""
        return f"at offset {self.offset}: {self.path}: {self.message}{rule}"

    def __reduce__(self):  # keep pickling (multiprocessing) working
        return (_rebuild, (type(self), self.message, self.offset, self.path, self.rule,
                           self.expected, self.actual))


class UnsupportedError(FormatError):
    """Well-formed input that uses a feature this build cannot decode."""


def _rebuild(cls, message, offset, path, rule, expected, actual):
    return cls(message, offset, path, rule=rule, expected=expected, actual=actual)
