"""The rule machinery and the parse choke point: ``formats.parse`` reads in
place and reports the failing field's offset and path, errors relocate into
an outer structure, and the rule registry and ``specs/`` list the same ids."""
from __future__ import annotations

import pathlib
import re
import struct
import tracemalloc

import construct as cs
import pytest

import blosckit
from blosckit.tools import divergences
from blosckit.errors import FormatError, Problem, UnsupportedError
from blosckit.formats import MissingContext, parse
from blosckit.formats import chunk as fc
from blosckit.formats.rules import OFFSETS, RULES
from helpers import b2_compress, dataset

SPECS = pathlib.Path(__file__).resolve().parent.parent / "specs"
RULE_ID = r"(?:[A-Z]{1,2}\d+|[TF]-[a-z0-9-]+|D-nan)"


# ---------------------------------------------------------------------------
# formats.parse
# ---------------------------------------------------------------------------

NESTED = cs.Struct("a" / cs.Int8ul * "doc a", "b" / cs.Const(b"XY") * "doc b",
                   "c" / cs.Struct("d" / cs.Int32ul, "e" / cs.Bytes(4)))


def test_parse_reports_the_failing_field_offset_and_path():
    buf = b"\0" * 100 + b"\x01XZ" + bytes(8)
    with pytest.raises(FormatError) as e:
        parse(NESTED, buf, 100, "x", rule="T-test")
    assert (e.value.offset, e.value.path, e.value.rule) == (101, "x.b", "T-test")


def test_parse_truncation_reports_the_input_length():
    buf = b"\0" * 10 + b"\x01XY\0\0\0\0ab"
    with pytest.raises(FormatError) as e:
        parse(NESTED, buf, 10, "x", rule="T-test")
    assert (e.value.offset, e.value.path) == (len(buf), "x.c.e")


def test_parse_at_an_offset_reads_in_place():
    big = bytearray(64 << 20)
    big[1 << 20:(1 << 20) + 16] = struct.pack("<BBBBiii", 5, 1, 0x10, 4, 400, 400, 16)
    tracemalloc.start()
    try:
        h = parse(fc.ChunkHeader, memoryview(big), 1 << 20, "chunk.header", rule="H1")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (h.version, h.nbytes, h.cbytes) == (5, 400, 16)
    assert peak < 1 << 20       # the 63 MiB after the header were not copied


def test_parse_standalone_stream_needs_its_context():
    with pytest.raises(MissingContext):
        parse(fc.Stream, struct.pack("<i", -3) + b"\x01", 0, "s", rule="B4")
    s = parse(fc.Stream, struct.pack("<i", -3) + b"\x01", 0, "s", rule="B4", version=5)
    assert (s.csize, s.token) == (-3, 1)
    blk = parse(fc.VLBlock, struct.pack("<i", 9) + b"abc", 0, "b", rule="VL3", len_payload=3)
    assert (blk.size, blk.payload) == (9, b"abc")


@pytest.mark.parametrize("data", [b"", b"\xff" * 3, struct.pack("<i", 2**31 - 1) + b"x"])
def test_parse_of_hostile_bytes_raises_only_format_error(data):
    for con, kw in ((fc.Stream, {"version": 5}), (fc.DictSection, {}),
                    (fc.LazyTrailer, {"num_blocks": 2**30}), (fc.Header, {})):
        with pytest.raises(FormatError) as e:
            parse(con, data, 0, "p", rule="T-test", **kw)
        assert 0 <= e.value.offset <= len(data)


# ---------------------------------------------------------------------------
# Relocation
# ---------------------------------------------------------------------------

def test_format_error_relocates_into_a_frame():
    chunk = bytearray(b2_compress(dataset("arange", 4000, 4), typesize=4, codec="lz4",
                                  filters=["shuffle"], blocksize=1024, splitmode="never"))
    b3 = blosckit.parse_chunk(chunk).bstarts[3]
    chunk[b3:b3 + 4] = struct.pack("<i", 2**30)
    with pytest.raises(FormatError) as e:
        blosckit.decompress(chunk)
    err = e.value.relocated(5000, "frame.chunks[12]")
    assert type(err) is type(e.value) and err.rule == e.value.rule == "B4"
    assert err.path == "frame.chunks[12].blocks[3].streams[0].csize"
    assert err.offset == 5000 + b3
    u = UnsupportedError("m", 2, "chunk.header.flags", rule="T-codec").relocated(10, "f.c[0]")
    assert isinstance(u, UnsupportedError) and (u.offset, u.path) == (12, "f.c[0].header.flags")


def test_problem_relocates():
    p = Problem("error", 12, "chunk.header.cbytes", "m", "H2").relocated(100, "frame.chunks[1]")
    assert (p.offset, p.path, p.rule) == (112, "frame.chunks[1].header.cbytes", "H2")


# ---------------------------------------------------------------------------
# The registry and specs/
# ---------------------------------------------------------------------------

def _spec_text() -> str:
    return "\n".join(p.read_text() for p in sorted(SPECS.glob("*.md")))


def _listed_ids() -> set[str]:
    """Ids in the first column of the spec's rule tables (rows starting
    ``| <id> |``) and in the headings of specs/divergences.md (``### <id> <a``)."""
    text = _spec_text()
    return (set(re.findall(rf"^\|\s*({RULE_ID})\s*\|", text, re.M))
            | set(re.findall(rf"^#+ ({RULE_ID}) <a id=", text, re.M)))


def test_every_rule_is_listed_in_specs():
    listed = _listed_ids()
    assert sorted(set(RULES) - listed) == []


def test_every_divergence_is_described_in_specs():
    listed = _listed_ids()
    assert sorted({d.id for d in divergences.DIVERGENCES} - listed) == []


def test_specs_list_no_rule_that_nothing_raises():
    known = set(RULES) | {d.id for d in divergences.DIVERGENCES}
    assert sorted(_listed_ids() - known) == []


def test_every_rule_anchor_exists():
    for r in RULES.values():
        doc, anchor = r.anchor.split("#")
        text = (SPECS / doc).read_text()
        assert re.search(rf"^#+ .*{re.escape(anchor)}|\{{#{re.escape(anchor)}\}}|"
                         rf"^#+ {re.escape(anchor)}$", text, re.M), r


def test_rule_paths_have_offsets_or_are_indexed():
    for r in RULES.values():
        # structures whose offset depends on the input say it when they report
        # (a truncation, "input", always at the input's end)
        assert r.path in OFFSETS or "[]" in r.path or r.path in (
            "input", "chunk", "chunk.bstarts", "chunk.dict.dsize", "chunk.dict.dict", "npy.header",
            "frame.metalayers", "frame.trailer", "frame.offsets", "frame.trailer.version",
            "frame.trailer.fingerprint_type",
            "frame.metalayers['b2nd']", "frame.metalayers['b2nd'].shape",
            "frame.metalayers['b2nd'].dtype.dtype"), r


def test_rules_are_functions_beside_their_declarations():
    checked = [r for r in RULES.values() if r.check is not None]
    assert len(checked) >= 25
    for r in checked:
        assert r.check.__module__.startswith("blosckit.formats."), r


def test_every_rule_has_exactly_one_body_beside_its_declaration():
    """Each registered id has a check function, defined in the ``formats``
    module that declares it (the decorator binds the function's name to the
    Rule there), and no function serves two ids."""
    import importlib
    no_body = sorted(r.id for r in RULES.values() if r.check is None)
    assert no_body == []
    assert len({id(r.check) for r in RULES.values()}) == len(RULES)
    for r in RULES.values():
        module = importlib.import_module(r.check.__module__)
        assert module.__name__.startswith("blosckit.formats."), r
        assert getattr(module, r.check.__name__) is r, r      # registered where declared


def _rule_names() -> set[str]:
    """Names the formats modules bind to Rule objects (``stream_inside_chunk``)."""
    import importlib
    import pkgutil

    import blosckit.formats as formats
    from blosckit.formats.rules import Rule
    names = set()
    for m in pkgutil.iter_modules(formats.__path__):
        mod = importlib.import_module(f"blosckit.formats.{m.name}")
        names |= {k for k, v in vars(mod).items() if isinstance(v, Rule)}
    return names


def _names_a_rule(node, names: set[str]) -> bool:
    """``node`` is a registered rule id, a Rule object or its ``.id``."""
    import ast
    if isinstance(node, ast.Constant):
        return node.value in RULES
    if isinstance(node, ast.Attribute) and node.attr == "id":
        node = node.value
    return (isinstance(node, ast.Name) and node.id in names) or \
        (isinstance(node, ast.Attribute) and node.attr in names)


def _passed_on(node) -> bool:
    """``node`` is another error's rule (``e.rule``, ``rule``, ``e.rule or "?"``)."""
    import ast
    if isinstance(node, ast.BoolOp):
        return _passed_on(node.values[0])
    return (isinstance(node, ast.Attribute) and node.attr == "rule") or \
        (isinstance(node, ast.Name) and node.id == "rule")


def test_no_rule_is_reported_outside_formats():
    """Outside ``formats/``, no code raises or reports a rule by itself: no
    ``FormatError(..., rule=<a rule>)`` / ``UnsupportedError`` / ``Problem``
    naming a rule, no ``fail(...)``, no sink call choosing its rule; walkers
    run the rule bodies into a sink.  (Passing on another error's rule,
    ``e.rule``, is relocation, not a report.)"""
    import ast
    root = pathlib.Path(blosckit.__file__).parent
    names = _rule_names()
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("formats/"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            fname = func.id if isinstance(func, ast.Name) else \
                func.attr if isinstance(func, ast.Attribute) else ""
            rule_args = [k.value for k in node.keywords if k.arg == "rule"]
            if fname == "Problem" and len(node.args) >= 5:
                rule_args.append(node.args[4])
            if fname == "fail":
                found.append(f"{rel}:{node.lineno}: fail()")
            elif fname != "parse" and any(_names_a_rule(a, names) for a in rule_args):
                found.append(f"{rel}:{node.lineno}: {fname}(..., rule=...)")
            elif fname not in ("parse", "FormatError", "UnsupportedError", "Problem") and \
                    not all(_passed_on(a) for a in rule_args):
                found.append(f"{rel}:{node.lineno}: {fname}(..., rule=...) picks the rule")
    assert found == []
