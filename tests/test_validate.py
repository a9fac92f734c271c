"""``blosckit.validate`` on chunks, and the two decoder paths agreeing.

- validate reports every independent fault, each with its rule, offset and
  path, and never raises;
- it returns ``[]`` for what python-blosc2 and python-blosc write;
- over a hostile corpus, validate finds an error exactly when the reader
  rejects the blob, and at least one Problem wherever C-Blosc2 (or, for
  versions 1-2, C-Blosc 1.x) refuses it or decodes it to other data;
- the Python decoder and the native one give the same data or the same rule.
"""
from __future__ import annotations

import hashlib
import struct

import pytest

import blosckit
import helpers
from helpers import (CODECS, b1_compress, b2_compress, check_blosc1_chunks_are_in,
                     check_format_error, dataset, mutations, oracle_verdicts, small_chunks)
from oracles import oracle

np = oracle("numpy")
blosc2 = oracle("blosc2")

CHUNKS = small_chunks()
CAP = 1 << 22      # mutated headers may claim up to 2 GiB of valid zeros
NAMES = sorted(CHUNKS)


def _errors(problems):
    return [p for p in problems if p.severity == "error"]


def _check_problem(p, blob):
    assert p.severity in ("error", "warning")
    assert 0 <= p.offset <= len(blob), p
    assert p.path.startswith("chunk"), p
    assert p.rule in blosckit.formats.rules.RULES or p.severity == "warning", p
    assert p.message


# ---------------------------------------------------------------------------
# Every fault, each with its rule
# ---------------------------------------------------------------------------

def test_independent_faults_are_all_reported():
    data = dataset("arange", 8000, 4)
    chunk = bytearray(b2_compress(data, typesize=4, codec="lz4", filters=["shuffle"],
                                  blocksize=1024, splitmode="never"))
    c = blosckit.parse_chunk(chunk)
    chunk[30] |= 0x40                                    # reserved blosc2_flags2 bit
    chunk[32 + 4 * 2:32 + 4 * 3] = struct.pack("<i", 5)  # bstart 2 inside the header
    b5 = c.bstarts[5]
    chunk[b5 + 4:b5 + 8] = b"\xff\xff\xff\xff"          # garbage in block 5's stream
    # the reader stops at the first
    with pytest.raises(blosckit.FormatError) as e:
        blosckit.decompress(chunk)
    assert e.value.rule == "T-flags2"
    problems = blosckit.validate(bytes(chunk))
    got = {(p.rule, p.offset, p.path) for p in problems}
    assert ("T-flags2", 30, "chunk.header.extended.blosc2_flags2") in got
    assert ("B1", 40, "chunk.bstarts[2]") in got
    assert any(p.rule == "B7" and p.path.startswith("chunk.blocks[5]") for p in problems), got
    for p in problems:
        _check_problem(p, chunk)


def test_header_faults_that_do_not_hide_each_other():
    chunk = bytearray(b2_compress(dataset("arange", 4000, 4), typesize=4, codec="zstd",
                                  filters=["shuffle"]))
    chunk[3] = 0                                  # typesize 0
    chunk[30] |= 0x02                             # reserved flags2 bit
    rules = {p.rule for p in blosckit.validate(bytes(chunk))}
    assert {"H5", "T-flags2"} <= rules


def test_shallow_validation_decodes_nothing():
    data = dataset("arange", 8000, 4)
    chunk = bytearray(b2_compress(data, typesize=4, codec="lz4", filters=["shuffle"],
                                  blocksize=1024, splitmode="never"))
    b5 = blosckit.parse_chunk(chunk).bstarts[5]
    chunk[b5 + 4:b5 + 8] = b"\xff\xff\xff\xff"
    assert _errors(blosckit.validate(bytes(chunk), deep=False)) == []
    assert [p.rule for p in _errors(blosckit.validate(bytes(chunk)))] == ["B7"]


def test_validate_takes_a_path(tmp_path):
    p = tmp_path / "c.b2chunk"
    p.write_bytes(CHUNKS["lz4-shuffle"])
    assert blosckit.validate(p) == [] and blosckit.validate(str(p)) == []
    with pytest.raises(OSError):
        blosckit.validate(tmp_path / "missing")


@pytest.mark.parametrize("junk", [b"", b"\0", b"\xff" * 15, bytes(16), b"\xff" * 64,
                                  bytes(range(256)) * 3])
def test_validate_never_raises(junk):
    problems = blosckit.validate(junk)
    assert _errors(problems)
    for p in problems:
        _check_problem(p, junk)


# ---------------------------------------------------------------------------
# Valid writers' output is []
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["random", "zeros", "runs", "arange", "linspace"])
@pytest.mark.parametrize("nbytes", [0, 32, 1000, 300_000])
def test_python_blosc2_defaults_are_valid(kind, nbytes):
    data = dataset(kind, nbytes, 8)
    assert blosckit.validate(blosc2.compress(data)) == []
    assert blosckit.validate(blosc2.compress2(data)) == []
    arr = np.frombuffer(data[:nbytes - nbytes % 8], dtype="<f8")
    assert blosckit.validate(blosc2.compress(arr)) == []


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("filters", [[], ["shuffle"], ["bitshuffle"], ["delta", "shuffle"]])
def test_python_blosc2_chunks_are_valid(codec, filters):
    data = dataset("arange", 70_000, 4)
    assert blosckit.validate(b2_compress(data, typesize=4, codec=codec, filters=filters)) == []


@pytest.mark.parametrize("shuffle", ["noshuffle", "shuffle", "bitshuffle"])
@pytest.mark.parametrize("cname", ["blosclz", "lz4", "zlib", "zstd"])
def test_python_blosc_chunks_are_valid(shuffle, cname):
    oracle("blosc")
    data = dataset("arange", 70_000, 4)
    assert blosckit.validate(b1_compress(data, typesize=4, shuffle=shuffle, cname=cname)) == []


# ---------------------------------------------------------------------------
# The hostile corpus: validate agrees with the reader and with the oracles
# ---------------------------------------------------------------------------

def _corpus(names=NAMES):
    for name in names:
        for label, blob in mutations(CHUNKS[name]):
            yield f"{name}:{label}", blob


CORPUS = dict(_corpus())


def test_the_corpus_holds_c_blosc_1x_chunks():
    check_blosc1_chunks_are_in(CHUNKS)


def _huge(label: str, blob: bytes) -> bool:
    """A special chunk whose nbytes was raised above CAP: its decoding, here
    and in C-Blosc2's child, is a fill of up to 2 GiB, about a second each."""
    return label.startswith("special-") and len(blob) >= 8 and \
        struct.unpack_from("<i", blob, 4)[0] > CAP


# The corpus in parts: the default run takes every fourth input of the
# bounded part (a fixed sample, every kind of blob), the long tier all of it
# and the huge ones, so that the default run stays within its time and memory.
PARTS = {"bounded": [k for k, b in CORPUS.items() if not _huge(k, b)],
         "huge": [k for k, b in CORPUS.items() if _huge(k, b)]}
PARTS["sample"] = PARTS["bounded"][::4]
PART = [pytest.param("sample"), pytest.param("bounded", marks=pytest.mark.long),
        pytest.param("huge", marks=pytest.mark.long)]


def test_the_huge_part_is_small_and_special():
    assert 0 < len(PARTS["huge"]) < 100 and len(PARTS["bounded"]) > 10_000
    assert {k.split(":")[0] for k in PARTS["huge"]} == {"special-zeros", "special-value",
                                                        "special-nan"}


@pytest.mark.parametrize("part", PART)
def test_validate_finds_an_error_exactly_when_the_reader_rejects(part):
    bad = []
    for label in PARTS[part]:
        blob = CORPUS[label]
        try:
            blosckit.decompress(blob)
            rejected = None
        except blosckit.FormatError as e:
            check_format_error(e, blob)
            rejected = e
        problems = blosckit.validate(blob)
        for p in problems:
            _check_problem(p, blob)
        errors = _errors(problems)
        if rejected is not None and rejected.rule not in {p.rule for p in errors}:
            bad.append((label, "reader", rejected.rule, [p.rule for p in errors]))
        if rejected is None and errors:
            bad.append((label, "validate", [str(p) for p in errors]))
    assert bad == []


@pytest.mark.parametrize("part", PART)
def test_validate_flags_what_the_c_libraries_refuse(part):
    """Every blob C-Blosc2 refuses or decodes to other data than blosckit
    (or, for chunk versions 1-2, C-Blosc 1.x refuses) gets at least one
    Problem.  The C libraries run in a subprocess, so a crash there is a
    verdict, not a failed test run."""
    labels = PARTS[part]
    blobs = [CORPUS[k] for k in labels]
    verdicts = oracle_verdicts(blobs)
    missed = []
    for label, blob, v in zip(labels, blobs, verdicts):
        legacy = len(blob) > 0 and blob[0] <= 2
        refused = not v.b2_ok or (legacy and v.b1_ok is False)
        if not refused:
            try:
                ours = blosckit.decompress(blob, max_nbytes=CAP)
            except blosckit.FormatError:
                ours = None
            refused = ours is not None and hashlib.sha256(ours).digest() != v.digest
        if refused and not blosckit.validate(blob):
            missed.append(label)
    assert missed == []


# ---------------------------------------------------------------------------
# One decoder behaviour: the Python path and the native one
# ---------------------------------------------------------------------------

def _outcome(blob):
    try:
        return blosckit.decompress(blob, max_nbytes=CAP)
    except blosckit.FormatError as e:
        return (type(e).__name__, e.rule)


@pytest.mark.parametrize("name", NAMES)
def test_python_and_native_decoders_agree(name):
    labels = [k for k in CORPUS if k.startswith(name + ":")]
    native = {k: _outcome(CORPUS[k]) for k in labels}
    with helpers.python_reader():
        python = {k: _outcome(CORPUS[k]) for k in labels}
    diff = [(k, native[k] if not isinstance(native[k], bytes) else "data",
             python[k] if not isinstance(python[k], bytes) else "data")
            for k in labels if native[k] != python[k]]
    assert diff == []


def test_bytes_after_a_bare_chunk_are_a_warning_at_cbytes():
    """Readers decode the first cbytes and ignore the rest; validate says so
    (T-trailing), a warning: the chunk itself is valid."""
    chunk = b2_compress(dataset("arange", 4000), typesize=4)
    assert blosckit.validate(chunk) == []
    got = blosckit.validate(chunk + b"\0" * 77)
    assert [(p.severity, p.rule, p.offset, p.path) for p in got] == [
        ("warning", "T-trailing", len(chunk), "chunk")]
    assert "77 bytes" in got[0].message
    assert blosckit.decompress(chunk + b"\0" * 77) == dataset("arange", 4000)
