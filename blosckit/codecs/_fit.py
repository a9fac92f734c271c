"""Helpers shared by the codecs: the copy step of every Python fallback path,
and the failure codes a stream decoder returns."""
from __future__ import annotations

import threading


def fit_into(out: bytes | None, dst, missing: int) -> int:
    """Copy ``out`` to the start of ``dst`` and return its length; return
    ``missing`` (0 for an encoder, -1 for a decoder) when there is no output
    or it does not fit."""
    if out is None or len(out) > len(dst):
        return missing
    dst[:len(out)] = out
    return len(out)


def describe_count(name: str, got: int, expected: int) -> str:
    """The sentence for a stream that decoded, but to the wrong size (bytes)."""
    if got > expected:
        return f"the {name} stream decodes to more than the {expected} bytes expected"
    return f"the {name} stream decodes to {got} bytes, expected {expected}"


class FailureTexts:
    """Failure sentences a decoder met, each behind a stable negative code.

    ``decompress_into`` returns ints (the hot path stays allocation free), so
    a message that only exists as text (a Python binding's exception, zlib's
    ``msg``) is interned here and its code returned instead.  The codes lie
    below -2**32, out of reach of any C ``int`` return value (liblz4's
    negative input positions), and the table is per codec.
    """

    BASE = -(1 << 32)
    LIMIT = 512             # distinct texts kept; more fold into one code

    def __init__(self) -> None:
        self._texts: list[str] = []
        self._codes: dict[str, int] = {}
        self._lock = threading.Lock()

    def code(self, text: str) -> int:
        """The code for ``text`` (the same text always gets the same code)."""
        with self._lock:
            got = self._codes.get(text)
            if got is None:
                if len(self._texts) >= self.LIMIT:
                    text = "malformed stream (further messages not kept)"
                    got = self._codes.get(text)
                if got is None:
                    got = self.BASE - len(self._texts)
                    self._texts.append(text)
                    self._codes[text] = got
            return got

    def text(self, code: int) -> str | None:
        """The text behind ``code``, or None when it is not one of ours."""
        k = self.BASE - code
        if 0 <= k < len(self._texts):
            return self._texts[k]
        return None
