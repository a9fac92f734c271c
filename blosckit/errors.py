"""The two exceptions every public function may raise for bad input, and the
``Problem`` record the validator returns instead of raising.

Offsets and paths are relative to the structure that was parsed; when that
structure sits inside another (a chunk inside a frame) they are relocated,
never re-derived: :meth:`FormatError.relocated` adds the outer offset and
swaps the path's root (``chunk.blocks[3].csize`` becomes
``frame.chunks[12].blocks[3].csize``).
"""
from __future__ import annotations

from dataclasses import dataclass, replace


def relocate_path(path: str, root: str) -> str:
    """``path`` with its first segment (up to the first ``.`` or ``[``)
    replaced by ``root``."""
    cut = len(path)
    for sep in ".[":
        k = path.find(sep)
        if k != -1:
            cut = min(cut, k)
    return root + path[cut:]


def _relocated_message(message: str, path: str, new_path: str) -> str:
    """``message`` naming ``new_path`` where it named the error's own
    ``path`` (a truncation says "inside chunk.header")."""
    return message.replace(f"inside {path}", f"inside {new_path}") if path else message


class FormatError(ValueError):
    """Malformed input.

    ``offset`` is the byte offset into the input where the problem was found
    (for input that ends too early: the input length, where the missing bytes
    should start); ``path`` names the structure, e.g. ``chunk.header.blocksize``;
    ``rule`` is the id of the rule in ``specs/`` that the input breaks.
    """

    def __init__(self, message: str, offset: int, path: str, *,
                 rule: str | None = None) -> None:
        self.message = message
        self.offset = int(offset)
        self.path = path
        self.rule = rule
        super().__init__(message)

    def __str__(self) -> str:
        rule = f" [{self.rule}]" if self.rule else ""
        return f"at offset {self.offset}: {self.path}: {self.message}{rule}"

    def relocated(self, base: int, root: str) -> FormatError:
        """The same error seen from an outer structure: ``base`` is where the
        inner structure starts in the outer input, ``root`` its path there."""
        path = relocate_path(self.path, root)
        err = type(self)(_relocated_message(self.message, self.path, path), self.offset + base,
                         path, rule=self.rule)
        err.__cause__ = self.__cause__
        return err

    def __reduce__(self):  # keep pickling (multiprocessing) working
        return (_rebuild, (type(self), self.message, self.offset, self.path, self.rule))


class UnsupportedError(FormatError):
    """Well-formed input that uses a feature this build cannot decode."""


def _rebuild(cls, message, offset, path, rule):
    return cls(message, offset, path, rule=rule)


@dataclass(frozen=True)
class Problem:
    """One finding of the validator: ``severity`` is ``"error"`` (the input is
    invalid) or ``"warning"`` (legal, but suspicious or misread by C-Blosc2);
    ``offset`` is a byte offset inside the input; ``rule`` the id in ``specs/``.
    ``location`` names the chunk inside a container (an HDF5 file, a zarr
    store): its dataset or array and chunk coordinates, ``"/group/ds[2,0]"``;
    ``""`` for a bare chunk or frame.  Inside a container ``offset`` is in the
    file that holds the chunk (the ``.h5`` file, a zarr chunk or shard file)."""
    severity: str
    offset: int
    path: str
    message: str
    rule: str
    location: str = ""

    def relocated(self, base: int, root: str) -> Problem:
        """As :meth:`FormatError.relocated`."""
        path = relocate_path(self.path, root)
        return replace(self, offset=self.offset + base, path=path,
                       message=_relocated_message(self.message, self.path, path))

    def __str__(self) -> str:
        where = f"{self.location}:" if self.location else ""
        return f"{where}{self.offset}: {self.severity}: {self.path}: {self.message} [{self.rule}]"
