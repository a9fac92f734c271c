"""The command line's argparse parser: the program's options, then one
function per command adding its arguments, help texts and what runs it."""
from __future__ import annotations

import argparse
from typing import Callable

from ..chunk.encode import FORMATS, MAX_THREADS
from ..codecs.registry import REPORTED
from . import (append, compress, corpus, decompress, fuzz, info, inspect, meta, salvage, scan,
               validate)
from .arguments import FILTER_CHOICES, count, filters, shape
from .version import VersionAction

DESCRIPTION = ("Read, inspect, validate, salvage and build Blosc chunks and Blosc2 "
               "frames (contiguous, sparse and b2nd).")
EPILOG = ("exit codes: 0 fine, 1 corrupt input or validation errors, 2 usage error, "
          "3 valid but unsupported (a plugin codec, an unknown filter).\n"
          "FILE may be '-' for standard input; OUT may be '-' for standard output.")
CODECS = tuple(c for c in REPORTED if c != "snappy")     # snappy is Blosc1-only: not offered

AddCommand = Callable[[str, str], argparse.ArgumentParser]


class _Formatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Defaults in --help (those worth saying: not None, not a flag's False),
    and the epilogs kept as written."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or isinstance(action.default, bool):
            return action.help or ""
        return super()._get_help_string(action)


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``blosckit [--version] [--traceback] COMMAND ...``; each
    command sets ``fn``, the function that runs it."""
    p = argparse.ArgumentParser(prog="blosckit", formatter_class=_Formatter,
                                description=DESCRIPTION, epilog=EPILOG)
    p.add_argument("--version", action=VersionAction,
                   help="show the version and the native paths of this build")
    p.add_argument("--traceback", action="store_true", help="show Python tracebacks")
    add = _command_adder(p)
    for command in COMMANDS:
        command(add)
    return p


def _command_adder(p: argparse.ArgumentParser) -> AddCommand:
    """A function ``(name, help) -> its subparser``, each taking the options
    every command accepts after its name."""
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND")
    common = argparse.ArgumentParser(add_help=False)
    # accepted after the command too; SUPPRESS keeps the value given before it
    common.add_argument("--traceback", action="store_true", default=argparse.SUPPRESS,
                        help="show Python tracebacks")

    def add(name: str, help: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, parents=[common], help=help, description=help,
                              formatter_class=_Formatter)
    return add


# ---------------------------------------------------------------------------
# Arguments several commands take
# ---------------------------------------------------------------------------

def _files(s: argparse.ArgumentParser, help: str | None = None) -> None:
    s.add_argument("files", nargs="+", metavar="FILE", help=help)


def _json(s: argparse.ArgumentParser, what: str) -> None:
    s.add_argument("--json", action="store_true", help=what)


def _offset(s: argparse.ArgumentParser) -> None:
    s.add_argument("--offset", type=count(0), default=None, metavar="N",
                   help="read the chunk or frame starting at byte N of the file "
                        "(cut to its declared length)")


def _nthreads(s: argparse.ArgumentParser) -> None:
    s.add_argument("--nthreads", type=count(1, MAX_THREADS), default=1,
                   help=f"threads, 1..{MAX_THREADS}")


def _seed(s: argparse.ArgumentParser, help: str) -> None:
    s.add_argument("--seed", type=count(0), default=0, help=help)


# ---------------------------------------------------------------------------
# The commands, in the order --help lists them
# ---------------------------------------------------------------------------

def _info(add: AddCommand) -> None:
    s = add("info", "a summary of each chunk or frame, and whether it is valid")
    _files(s)
    _json(s, "one JSON object per file")
    _offset(s)
    s.set_defaults(fn=info.run)


def _inspect(add: AddCommand) -> None:
    s = add("inspect", "every field of a chunk or frame with its offset, bytes and meaning")
    _files(s)
    _json(s, "one JSON object per file, with every node")
    _offset(s)
    s.add_argument("--chunk", type=count(0), default=None, metavar="N",
                   help="frames: expand chunk N to the field level")
    s.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="colour the text output")
    s.set_defaults(fn=inspect.run)


def _validate(add: AddCommand) -> None:
    s = add("validate", "every problem of each chunk or frame "
                        "(FILE:OFFSET: severity: path: message [rule])")
    # "*": --dask takes an optional address, and "--dask DIR" means a local
    # cluster over DIR (validate.run puts a non-address back among the files)
    s.add_argument("files", nargs="*", metavar="FILE",
                   help="files, sparse frame directories, or directories to walk")
    _json(s, "one JSON object per file")
    _offset(s)
    depth = s.add_mutually_exclusive_group()
    depth.add_argument("--deep", dest="deep", action="store_true", default=True,
                       help="decode every chunk and check every size")
    depth.add_argument("--shallow", dest="deep", action="store_false",
                       help="check headers, indexes and chunk headers only (fast)")
    s.add_argument("-q", "--quiet", action="store_true", help="say nothing for valid files")
    s.add_argument("--dask", nargs="?", const="local", default=None, metavar="SCHEDULER",
                   help="validate on dask.distributed: a local cluster (one worker per core), "
                        "or the scheduler at this address; one JSON line per input as "
                        "results arrive (the dask extra)")
    s.add_argument("--resume", default=None, metavar="FILE",
                   help="with --dask: skip the inputs this earlier run's JSON lines name "
                        "(append the new lines to it: >> FILE)")
    s.set_defaults(fn=validate.run)


def _scan(add: AddCommand) -> None:
    s = add("scan", "every chunk and frame found inside a blob, with offsets")
    _files(s)
    _json(s, "one JSON object per structure found")
    s.set_defaults(fn=scan.run)


def _force(s: argparse.ArgumentParser) -> None:
    """-f/--force: an existing OUT may be replaced (never an input)."""
    s.add_argument("-f", "--force", action="store_true",
                   help="overwrite an existing OUT (an OUT that is the input is refused "
                        "even so)")


def _decompress(add: AddCommand) -> None:
    s = add("decompress", "decode a chunk or a frame (detected) to raw bytes, or .npy "
                          "for a b2nd frame")
    s.add_argument("input", metavar="IN")
    s.add_argument("output", metavar="OUT", help="raw bytes (a b2nd frame's items in C "
                                                 "order); a name ending in .npy writes a "
                                                 "NumPy file (b2nd frames)")
    s.add_argument("--stored", action="store_true",
                   help="a b2nd frame's chunks as stored (chunk order, padded to whole "
                        "blocks), not its items in C order")
    _force(s)
    _offset(s)
    _nthreads(s)
    s.set_defaults(fn=decompress.run)


def _compress(add: AddCommand) -> None:
    s = add("compress", "encode a file as one chunk, a frame of chunks, or (a .npy array) "
                        "a b2nd frame")
    s.add_argument("input", metavar="IN",
                   help="raw bytes, or a .npy file (its array data is compressed)")
    s.add_argument("output", metavar="OUT")
    _force(s)
    s.add_argument("--codec", default="blosclz", choices=CODECS, help="codec")
    s.add_argument("--clevel", type=count(0, 9), default=5, help="0..9")
    s.add_argument("--typesize", type=count(1, 255), default=None,
                   help="bytes per item, 1..255 (default: the .npy item size, else 1)")
    s.add_argument("--filters", type=filters, default="shuffle",
                   help="comma-separated, applied in order; name:meta gives a meta "
                        f"(e.g. shuffle,trunc_prec:20); names: {', '.join(FILTER_CHOICES)}")
    s.add_argument("--format", default="blosc2", choices=FORMATS, help="chunk format")
    _compress_layout(s)
    _nthreads(s)
    s.set_defaults(fn=compress.run)


def _compress_layout(s: argparse.ArgumentParser) -> None:
    """compress: what OUT is (a chunk, a frame, a b2nd frame) and its parts."""
    s.add_argument("--frame", action="store_true",
                   help="write a contiguous frame (the default above one chunk's limit, "
                        "2 GiB)")
    s.add_argument("--chunksize", type=count(1), default=None, metavar="BYTES",
                   help="bytes per frame chunk (implies --frame; default 4 MiB, a "
                        "multiple of the typesize)")
    s.add_argument("--chunkshape", type=shape, default=None, metavar="N,N,...",
                   help="items per chunk along each dimension: write the .npy array as a "
                        "b2nd frame (also the default for an OUT ending in .b2nd; default: "
                        "python-blosc2's choice for the array on this machine)")
    s.add_argument("--blockshape", type=shape, default=None, metavar="N,N,...",
                   help="items per block along each dimension (b2nd; default: "
                        "python-blosc2's choice)")


def _fuzz(add: AddCommand) -> None:
    s = add("fuzz", "differential fuzzing of blosckit against C-Blosc2 (fuzz extra)")
    s.add_argument("--against", default="c-blosc2", choices=("c-blosc2",),
                   help="the other reader")
    s.add_argument("--time", type=count(1), default=60, metavar="SECONDS",
                   help="how long to run")
    _seed(s, "reproducible runs")
    s.add_argument("--out", default=None, metavar="DIR",
                   help="write each new disagreement here (minimised, with a .txt)")
    _json(s, "the counts as one JSON object")
    s.set_defaults(fn=fuzz.run)


def _corpus(add: AddCommand) -> None:
    s = add("corpus", "write a seed corpus of valid and edge-case blobs with a manifest "
                      "(fuzz extra)")
    s.add_argument("out", metavar="OUT", help="directory to write")
    s.add_argument("--count", type=count(1), default=200, metavar="N", help="blobs")
    _seed(s, "reproducible corpora")
    s.set_defaults(fn=corpus.run)


def _salvage(add: AddCommand) -> None:
    s = add("salvage", "rebuild a valid frame from a damaged one; prints what was "
                       "recovered, chunk by chunk")
    s.add_argument("broken", metavar="BROKEN")
    s.add_argument("output", metavar="OUT")
    _force(s)
    _json(s, "the report as one JSON object")
    s.set_defaults(fn=salvage.run)


def _append(add: AddCommand) -> None:
    s = add("append", "compress files with a frame's own parameters and append them to it, "
                      "in place")
    s.add_argument("frame", metavar="FRAME", help="a frame file or sparse frame directory")
    s.add_argument("files", nargs="+", metavar="FILE",
                   help="raw bytes, or .npy files (their array data)")
    s.add_argument("--chunksize", type=count(1), default=4 << 20, metavar="BYTES",
                   help="bytes per new chunk when the frame's chunks vary in size (else the "
                        "frame's chunk size)")
    _json(s, "what was appended, as one JSON object")
    s.set_defaults(fn=append.run)


def _meta(add: AddCommand) -> None:
    s = add("meta", "list a frame's metalayers and vlmetalayers; set or delete them in place")
    s.add_argument("frame", metavar="FRAME", help="a frame file or sparse frame directory")
    s.add_argument("--set", nargs=2, action="append", metavar=("NAME", "VALUE"),
                   help="store VALUE (JSON, else a string; as msgpack): a vlmetalayer, or a "
                        "metalayer when NAME is one (same length only)")
    s.add_argument("--delete", action="append", metavar="NAME", help="remove a vlmetalayer")
    _json(s, "the layers as one JSON object")
    s.set_defaults(fn=meta.run)


COMMANDS = (_info, _inspect, _validate, _scan, _decompress, _compress, _fuzz, _corpus,
            _salvage, _append, _meta)
