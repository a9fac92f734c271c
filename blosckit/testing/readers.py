"""Every reader of blosckit on one input, each under a memory bound, and
what a correct toolkit must make of it -- the fuzzing harness's judge (the
``blosckit fuzz`` loop, the atheris ``readers`` target and the tests).

:func:`every_reader` runs the frame reader (``open_frame``, every chunk
through ``iter_decompress``, the metalayers and vlmetalayers, the b2nd
array as bytes and as a NumPy array), or for a chunk ``parse_chunk`` and
``decompress``; then ``validate`` (deep and shallow), ``inspect`` (every
node, and the nodes inside the first chunk), ``scan`` and ``salvage``.
The allowed outcomes:

* a reader returns, or raises :class:`~blosckit.FormatError` whose offset
  lies inside the input; ``validate`` never raises and its problems' offsets
  lie inside the input; ``salvage`` raises FormatError or returns a frame
  that ``validate`` finds no error in;
* ``validate`` and the readers agree: an input ``validate`` finds no error
  in reads without FormatError (``T-max-nbytes``, the caller's cap, aside);
* no reader maps more memory than its input allows (:func:`allowance`):
  each runs under an address-space limit (RLIMIT_AS) of what the process
  maps when it starts plus that allowance, so an allocation past it raises
  MemoryError -- a slip, whatever the code that asked.

Each departure is a :class:`Slip`.  Whether C-Blosc2 opens salvage's output
is asked by the caller (one child process for many outputs: see
:func:`blosckit.testing.fuzz.c_blosc2_verdicts`).
"""
from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any, Callable, Iterator, NamedTuple

from ..chunk.read import decompress, parse_chunk
from ..errors import FormatError
from ..formats import chunk as fc
from ..formats import frame as ff
from ..frame.read import open_frame
from ..tools import inspect as _inspect
from ..tools.salvage import SCAN_MAX_NBYTES, salvage
from ..tools.scan import scan
from ..tools.validate import validate

__all__ = ["Slip", "Readings", "every_reader", "allowance", "address_space_cap",
           "MEMORY_SLACK", "MAX_NBYTES"]

# Bytes any reader may map beyond its allowance: the interpreter's own
# growth, codec contexts, a block or two of scratch.
MEMORY_SLACK = 64 << 20
MAX_NBYTES = 1 << 24        # the readers' max_nbytes in the fuzz runs

# A caller's cap on the output, not a fault of the input: validate knows
# no cap, so it may find no error where a capped reader stops.
_CAPPED = "T-max-nbytes"


class Slip(NamedTuple):
    """A reader that did what no correct reader does.  ``reader`` names it
    (``"salvage"``, ``"validate"``, ``"open_frame"``, ...); ``kind`` is
    ``"raised"`` (an exception other than FormatError), ``"memory"`` (it
    mapped more than its bound), ``"offset"`` (an offset past the input),
    ``"disagrees"`` (with validate) or ``"output"`` (salvage's output is
    refused); ``detail`` the exception's type or the rule; ``what`` says it
    in words."""
    reader: str
    kind: str
    detail: str
    what: str

    @property
    def label(self) -> str:
        """What groups slips of one class (``salvage raised ValueError``)."""
        return " ".join(x for x in (self.reader, self.kind, self.detail) if x)


class Readings(NamedTuple):
    """:func:`every_reader`'s answer: the slips, and salvage's output (None
    when salvage raised) for the caller to ask C-Blosc2 about."""
    slips: list[Slip]
    salvaged: bytes | None


# An extra this large is no cap (and still fits the limit's 64 bits):
# headers may announce up to 2**63 bytes.
_NO_CAP = 1 << 60


def _mapped() -> int:
    """Bytes of address space this process maps now (Linux /proc)."""
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[0])
    return pages * os.sysconf("SC_PAGE_SIZE")


@contextlib.contextmanager
def address_space_cap(extra: int) -> Iterator[bool]:
    """Within the block the process may map at most ``extra`` bytes more
    than it maps on entry: past that, an allocation fails (MemoryError in
    Python, NULL from malloc in C, which the native code turns into
    MemoryError).  Yields whether the cap is on (not where the platform has
    no RLIMIT_AS or /proc/self/statm).  The limit is the process's: run no
    other thread meanwhile."""
    try:
        import resource
        now = _mapped()
    except (ImportError, OSError):
        yield False
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = now + min(extra, _NO_CAP)
    for limit in (soft, hard):
        if limit != resource.RLIM_INFINITY:
            cap = min(cap, limit)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield True
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _announced(blob: bytes) -> int:
    """The decoded size (bytes) the input's own header announces: a frame
    header's nbytes, a chunk header's nbytes; 0 when unreadable."""
    try:
        if ff.looks_like_frame(blob):
            layout = ff.FLAT_HEADERS[ff.header_layout(blob[0]) or 14]
            return max(0, int(layout.get(blob, "nbytes", 0)))
        return max(0, fc.raw_header(blob).nbytes)
    except Exception:            # noqa: BLE001 -- a cut or damaged header announces nothing
        return 0


def allowance(reader: str, blob: bytes, max_nbytes: int = MAX_NBYTES) -> int:
    """Bytes ``reader`` may map for ``blob`` beyond :data:`MEMORY_SLACK`:
    twice what it may hand back.  The readers given ``max_nbytes``
    (decompress, the array, scan) are held to it; validate and inspect to
    what the input's header announces (they take no cap: a frame that
    says 2 GiB may be checked in 2 GiB); salvage, which decodes candidate
    chunks up to its own bound, to the larger of that and the header's."""
    if reader in ("validate", "validate-shallow", "inspect"):
        return 2 * _announced(blob)
    if reader == "salvage":
        return 2 * max(_announced(blob), SCAN_MAX_NBYTES)
    return 2 * max_nbytes


def _read_frame(src, max_nbytes: int) -> None:
    with open_frame(src) as f:
        f.metalayers                        # noqa: B018 -- read them all
        f.vlmetalayers                      # noqa: B018
        for _ in f.iter_decompress(max_nbytes=max_nbytes):
            pass


def _numpy_before_any_cap() -> None:
    """Import NumPy (the array reader needs it) outside the memory caps: its
    OpenBLAS starts threads when imported, and under a small cap it cannot
    and ends the process (found by the atheris run on an empty array)."""
    try:
        import numpy  # noqa: F401
    except ImportError:
        pass


def _read_array(src, max_nbytes: int) -> None:
    with open_frame(src) as f:
        b = f.b2nd
        if b is None:
            return
        b.read(max_nbytes=max_nbytes)
        try:
            import numpy  # noqa: F401 -- the array reader needs it
        except ImportError:
            return
        b.array(max_nbytes=max_nbytes)


def _inspect_all(src, is_frame: bool, max_nbytes: int) -> None:
    if not is_frame:
        for _ in _inspect.chunk_nodes(src, max_nbytes=max_nbytes):
            pass
        return
    for _ in _inspect.frame_nodes(src):
        pass
    with open_frame(src) as f:
        if not f.nchunks:
            return                  # no chunk to walk into (IndexError: a bad argument)
    for _ in _inspect.frame_nodes(src, chunk=0):
        pass


def _readers(src, is_frame: bool, is_dir: bool, max_nbytes: int
             ) -> list[tuple[str, Callable[[], Any]]]:
    """``(name, call)`` of every reader that applies to ``src``."""
    if is_frame:
        out = [("open_frame", lambda: _read_frame(src, max_nbytes)),
               ("b2nd", lambda: _read_array(src, max_nbytes))]
    else:
        out = [("parse_chunk", lambda: parse_chunk(src)),
               ("decompress", lambda: decompress(src, max_nbytes=max_nbytes))]
    out += [("validate", lambda: validate(src)),
            ("validate-shallow", lambda: validate(src, deep=False)),
            ("inspect", lambda: _inspect_all(src, is_frame, max_nbytes))]
    if not is_dir:
        out.append(("scan", lambda: scan(src, max_nbytes=max_nbytes)))
    out.append(("salvage", lambda: salvage(src)))
    return out


def every_reader(src: bytes | str | os.PathLike, *, max_nbytes: int = MAX_NBYTES,
                 bound_memory: bool = True) -> Readings:
    """Run every reader on ``src`` (a chunk or a contiguous frame as bytes,
    or a sparse frame's directory) and return what no correct reader does
    (module docstring).  ``max_nbytes`` is the cap given to the readers
    that take one; ``bound_memory`` runs each under
    :func:`address_space_cap` of its :func:`allowance`."""
    _numpy_before_any_cap()
    is_dir = not isinstance(src, (bytes, bytearray, memoryview))
    blob = (Path(src) / ff.SFRAME_INDEX).read_bytes() if is_dir else bytes(src)
    is_frame = is_dir or ff.looks_like_frame(blob)
    slips: list[Slip] = []
    results: dict[str, Any] = {}
    for name, call in _readers(src if is_dir else blob, is_frame, is_dir, max_nbytes):
        extra = MEMORY_SLACK + allowance(name, blob, max_nbytes)
        try:
            with (address_space_cap(extra) if bound_memory else contextlib.nullcontext()):
                results[name] = call()
        except FormatError as e:
            results[name] = e
            if not is_dir and not 0 <= e.offset <= len(blob):
                slips.append(Slip(name, "offset", str(e.rule),
                                  f"the offset {e.offset} of its FormatError lies past the "
                                  f"input's {len(blob)} bytes [{e.rule}]"))
        except MemoryError:
            slips.append(Slip(name, "memory", "", f"mapped more than its {extra} bytes (the "
                                                  f"input announces {_announced(blob)})"))
        except Exception as e:     # noqa: BLE001 -- any other exception is the slip
            slips.append(Slip(name, "raised", type(e).__name__,
                              f"raised {type(e).__name__}: {e}"[:300]))
    slips += _judge(results, blob, is_dir)
    salvaged = results.get("salvage")
    return Readings(slips, salvaged[0] if isinstance(salvaged, tuple) else None)


def _judge(results: dict[str, Any], blob: bytes, is_dir: bool) -> list[Slip]:
    """What the readers' answers say together: validate's offsets and its
    agreement with the readers, salvage's output."""
    out: list[Slip] = []
    problems = results.get("validate")
    if isinstance(problems, FormatError):
        out.append(Slip("validate", "raised", "FormatError", f"raised FormatError: {problems}"))
        return out
    if not isinstance(problems, list):
        return out
    if not is_dir:
        out += [Slip("validate", "offset", p.rule, f"the offset {p.offset} of a problem lies "
                                                   f"past the input's {len(blob)} bytes")
                for p in problems if not 0 <= p.offset <= len(blob)]
    errors = [p for p in problems if p.severity == "error"]
    refused = {name: e for name, e in results.items()
               if name in ("open_frame", "b2nd", "parse_chunk", "decompress")
               and isinstance(e, FormatError) and e.rule != _CAPPED}
    if not errors:
        # a reader that refuses for a divergence validate warns of (V21: the
        # n-d array of a dtype NumPy cannot read) agrees with it
        warned = {p.rule for p in problems}
        out += [Slip(name, "disagrees", str(e.rule), f"validate finds no error, it raises "
                                                     f"{e.rule} at {e.offset} ({e.path})")
                for name, e in refused.items() if e.rule not in warned]
    salvaged = results.get("salvage")
    if isinstance(salvaged, tuple):
        bad = [p for p in validate(salvaged[0]) if p.severity == "error"]
        if bad:
            out.append(Slip("salvage", "output", bad[0].rule,
                            f"its output fails validate: {bad[0].rule} at {bad[0].offset} "
                            f"({bad[0].path})"))
    return out
