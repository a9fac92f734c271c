"""What :func:`blosckit.salvage` tells: the report and its items."""
from __future__ import annotations

from dataclasses import dataclass, field

from ...errors import FormatError

__all__ = ["SalvageReport", "Recovered", "Dropped", "Damage"]


@dataclass(frozen=True)
class Recovered:
    """One chunk of the rebuilt frame: ``index`` is its position there,
    ``offset`` the byte offset of its first byte in the damaged input (None
    for a special chunk that only the index held, and in a sparse frame,
    whose chunks are files: ``file`` names it), ``nbytes`` its decoded size
    in bytes, ``found_by`` "index", "scan" or "file" (a sparse frame's chunk
    file found without the index), ``source_index`` its position in the
    damaged frame's index (None when found without it)."""
    index: int
    offset: int | None
    nbytes: int
    found_by: str
    source_index: int | None = None
    file: str | None = None


@dataclass(frozen=True)
class Dropped:
    """Something of the damaged input the rebuilt frame does not hold:
    ``what`` is "chunk", "bytes" (a stretch where no intact chunk was found),
    "index" / "vlmetalayer-value" (chunks that are not data), "metalayers"
    / "metalayer" (the whole section, one of them) or "vlmetalayers" /
    "vlmetalayer"; ``name`` the (vl)metalayer's; ``offset`` and ``length``
    in bytes of the input when known; ``source_index`` the chunk's position
    in the damaged index."""
    what: str
    offset: int | None
    length: int | None
    reason: str
    source_index: int | None = None
    name: str | None = None


@dataclass(frozen=True)
class Damage:
    """A FormatError met on the way (offset in the input, path, rule)."""
    offset: int
    path: str
    rule: str | None
    message: str

    @classmethod
    def of(cls, e: FormatError) -> Damage:
        return cls(e.offset, e.path, e.rule, e.message)


@dataclass
class SalvageReport:
    """What :func:`salvage` recovered, dropped and found damaged.

    ``damage[0]``, when the frame could not be opened, is the error of the
    normal route (:func:`blosckit.open_frame`).  ``chunksize`` is the
    rebuilt frame's chunk size in bytes (0: chunks of varying size; -1: no
    chunk).  ``lost_regions`` names each chunk that was lost and whose place
    is kept by a placeholder: ``(its index in the rebuilt frame, the region
    it covered)``, the region as ``(start, stop)`` per dimension, in items
    of the array for a b2nd frame, else one range in bytes of the decoded
    data.  A placeholder is a chunk of zeros: a special chunk, or in a
    frame of varying chunk sizes a stored one (C-Blosc2 reads no special
    entry there)."""
    recovered: list[Recovered] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)
    damage: list[Damage] = field(default_factory=list)
    chunksize: int = -1
    lost_regions: list[tuple[int, tuple[tuple[int, int], ...]]] = field(default_factory=list)
    metalayers_kept: bool = True
    vlmetalayers_kept: bool = True
    notes: list[str] = field(default_factory=list)

    @property
    def nothing_found(self) -> bool:
        """True when no chunk at all could be recovered."""
        return not self.recovered

    @property
    def intact(self) -> bool:
        """True when the input was a valid frame and everything was kept."""
        return not self.damage and not self.dropped and not self.lost_regions

    def __str__(self) -> str:
        lines = [f"recovered {len(self.recovered)} chunks "
                 f"({sum(r.found_by == 'scan' for r in self.recovered)} by scan), "
                 f"dropped {len(self.dropped)} items, "
                 f"{len(self.lost_regions)} lost chunks kept as placeholders"]
        lines += [f"damage at {d.offset}: {d.path}: {d.message} [{d.rule}]" for d in self.damage]
        for d in self.dropped:
            where = "" if d.offset is None else f" at {d.offset}"
            size = "" if d.length is None else f" ({d.length} bytes)"
            name = "" if d.name is None else f" {d.name!r}"
            lines.append(f"dropped {d.what}{name}{where}{size}: {d.reason}")
        lines += [f"lost chunk {i}: placeholder of zeros for {_region(r)}"
                  for i, r in self.lost_regions]
        lines += self.notes
        return "\n".join(lines)


def _region(region: tuple[tuple[int, int], ...]) -> str:
    return "[" + ", ".join(f"{a}:{b}" for a, b in region) + "]"
