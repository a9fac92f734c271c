"""``blosckit.fuzz``: the differential run against C-Blosc2, what it found
(tests/data/c-blosc2-crashes), and the seed corpus with its manifest."""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import blosckit
import helpers
from oracles import oracle

blosc2 = oracle("blosc2")
from blosckit.testing import fuzz             # noqa: E402 (imports python-blosc2)

CRASHES = Path(__file__).parent / "data" / "c-blosc2-crashes"


def _cases():
    return sorted(p for p in CRASHES.iterdir() if p.suffix in (".bin", ".b2frame"))


def _kind(path: Path) -> str:
    return "frame" if path.suffix == ".b2frame" else "chunk"


@pytest.mark.parametrize("path", _cases(), ids=lambda p: p.stem)
def test_blobs_c_blosc2_crashes_on_are_rejected_or_warned(path):
    """Each is malformed and blosckit rejects it with its rule -- or, for a
    frame blosckit reads, validate names the divergence C-Blosc2 trips on."""
    blob = path.read_bytes()
    want = json.loads(path.with_suffix(".json").read_text())["blosckit"]
    out = fuzz.blosckit_outcome(blob, _kind(path))
    problems = blosckit.validate(blob)
    if want.get("reads"):
        assert out.digest is not None
        assert want["warning"] in {p.rule for p in problems if p.severity == "warning"}
        return
    assert (out.rule, out.offset, out.path) == (want["rule"], want["offset"], want["path"])
    # validate meets the same fault first (a frame's chunks bounded by the
    # frame's chunk size, as the reader bounds them)
    first = next(p for p in problems if p.severity == "error")
    assert (first.rule, first.offset, first.path) == (out.rule, out.offset, out.path)


JUDGEMENTS = 5          # runs of C-Blosc2 a repro may get; most must crash


def test_c_blosc2_still_crashes_on_them():
    """If a C-Blosc2 release fixes these, this fails: move the cases to a
    'fixed in' note in specs/divergences.md.  Some of these crashes are wild
    reads (a block start hundreds of MB past the chunk) that now and then
    land on mapped memory, so one run is no verdict: each judgement is a
    fresh oracle process (a new address-space layout), a repro that did not
    crash is judged again, up to JUDGEMENTS runs, and it must crash in most
    of them.  A repro that crashes at once needs no more runs."""
    for kind in ("chunk", "frame"):
        paths = [p for p in _cases() if _kind(p) == kind]
        runs = {p.name: [] for p in paths}
        todo = paths
        while todo:
            verdicts = fuzz.c_blosc2_verdicts([p.read_bytes() for p in todo], kind=kind,
                                              fresh=True)
            for p, v in zip(todo, verdicts):
                runs[p.name].append(v.crashed)
            todo = [p for p in todo if 2 * sum(runs[p.name]) <= JUDGEMENTS
                    and not runs[p.name][0] and len(runs[p.name]) < JUDGEMENTS]
        assert {n: r for n, r in runs.items() if not r[0] and 2 * sum(r) <= JUDGEMENTS} \
            == {}, runs


def test_a_crash_after_heap_damage_is_tried_again_alone():
    """The oracle's child handles many blobs; a blob after one that crashed
    it is judged in a fresh child, so only the culprit is called a crash."""
    good = blosc2.compress2(bytes(range(256)) * 8, typesize=1)
    bad = next(p for p in _cases() if _kind(p) == "chunk").read_bytes()
    v = fuzz.c_blosc2_verdicts([good, bad, good])
    assert [x.crashed for x in v] == [False, True, False]
    assert v[0].digest == v[2].digest == hashlib.sha256(bytes(range(256)) * 8).digest()


def test_one_oracle_process_serves_every_call_and_survives_crashes():
    """The oracle process imports python-blosc2 once: a crash in C-Blosc2
    happens in one of its forked children, and the next call is answered by
    the same process; ``fresh=True`` and a timeout each start a new one."""
    good = blosc2.compress2(bytes(range(256)) * 8, typesize=1)
    bad = next(p for p in _cases() if _kind(p) == "chunk").read_bytes()

    def oracle_pids():
        # this process's children that run the oracle script (from /proc)
        out = set()
        for d in Path("/proc").iterdir():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
                cmd = (d / "cmdline").read_bytes()
            except (OSError, ValueError, IndexError):
                continue
            if ppid == os.getpid() and b"from blosc2 import blosc2_ext" in cmd:
                out.add(int(d.name))
        return out

    fuzz.c_blosc2_verdicts([good])
    first = oracle_pids()
    assert len(first) == 1
    assert [v.crashed for v in fuzz.c_blosc2_verdicts([bad])] == [True]
    assert fuzz.c_blosc2_verdicts([good])[0].b2_ok
    assert oracle_pids() == first
    fuzz.c_blosc2_verdicts([good], fresh=True)
    second = oracle_pids()
    assert len(second) == 1 and second != first
    with pytest.raises(subprocess.TimeoutExpired):
        fuzz.c_blosc2_verdicts([good] * 2000, timeout=0.001)
    assert fuzz.c_blosc2_verdicts([good])[0].b2_ok
    third = oracle_pids()
    assert len(third) == 1 and third != second


def test_classify_names_the_known_divergence():
    chunk = blosckit.compress(bytes(range(200)) * 20, typesize=4,
                              filters=("delta", "bitshuffle", "delta"))
    v, = fuzz.c_blosc2_verdicts([chunk])
    got = fuzz.classify(chunk, "chunk", fuzz.blosckit_outcome(chunk, "chunk"), v)
    assert got == ("c-wrong-data", "known divergence V17")
    same = blosckit.compress(bytes(range(200)) * 20, typesize=4)
    v, = fuzz.c_blosc2_verdicts([same])
    assert fuzz.classify(same, "chunk", fuzz.blosckit_outcome(same, "chunk"), v) is None


# Slips of blosckit's readers and tools the fuzz run still finds, each with
# the strict xfail of tests/test_fuzz_findings.py that tracks it.  A label
# none of these matches is a new class: a failure.
KNOWN_SLIPS = {
    r"salvage output c-blosc2 refuses \(validate: \[\]\)$":
        "test_frame_holding_a_version_2_chunk, test_b2nd_blocksize_other_than_blockshape_items",
    r"b2nd raised TypeError$": "test_b2nd_array_of_a_dtype_numpy_cannot_parse",
    # the input's own chunk or name or array is one C-Blosc2 or python-blosc2
    # refuses or misreads (a divergence of the table, which validate warns
    # of), kept by salvage
    r"salvage output c-blosc2 refuses \(validate: ((V([1-9]|1[0-357]|19|2[0-3])|L\d), )*"
    r"(V([1-9]|1[0-357]|19|2[0-3])|L\d)\)$": "specs/divergences.md",
}

# Disagreements with C-Blosc2 no divergence explains, on inputs of the named
# mutation of a class validate does not report yet (the strict xfails)
KNOWN_NEW = {
    "b2nd-blocksize-mismatch": "test_b2nd_blocksize_other_than_blockshape_items",
    "b2nd-block-wider-than-chunk": "test_b2nd_block_extent_larger_than_chunk_extent",
}


def unknown_slips(labels) -> list[str]:
    """The slip labels (``<kind> <label>``) no known class matches."""
    return [k for k in labels if not any(re.search(p, k) for p in KNOWN_SLIPS)]


@pytest.mark.long
def test_fuzz_command_runs_and_prints_counts(tmp_path):
    r = subprocess.run([sys.executable, "-m", "blosckit", "fuzz", "--time", "3", "--seed",
                        "2", "--json", "--out", str(tmp_path / "found")],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    counts = json.loads(r.stdout)
    assert counts["inputs"] > 100 and counts["agree"] > counts["inputs"] // 2
    new = [k for k in counts["disagreements"] if ": NEW" in k
           and not any(k.endswith(f"[mutation {m}]") for m in KNOWN_NEW)]
    assert new == [], counts["disagreements"]          # every disagreement is explained
    # the named mutations ran, and every reader on the inputs, sparse frames
    # among them, slipping only as known
    assert len(counts["mutations"]) > 5, counts["mutations"]
    assert counts["read_by_all"].get("sframe", 0) > 0, counts["read_by_all"]
    assert unknown_slips(counts["slips"]) == [], counts["slips"]


@pytest.mark.long
def test_corpus_manifest_holds_for_blosckit(tmp_path):
    r = subprocess.run([sys.executable, "-m", "blosckit", "corpus", str(tmp_path / "c"),
                        "--count", "60"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    manifest = json.loads((tmp_path / "c" / "manifest.json").read_text())
    assert manifest["count"] == len(manifest["entries"]) == 60
    kinds = {(e["kind"], next(iter(e["expect"]))) for e in manifest["entries"]}
    assert {("chunk", "decode"), ("frame", "decode"), ("chunk", "reject")} <= kinds
    decodable, arrays = [], 0
    for e in manifest["entries"]:
        blob = (tmp_path / "c" / e["file"]).read_bytes()
        out = fuzz.blosckit_outcome(blob, e["kind"])
        if "decode" in e["expect"]:
            data = (blosckit.open_frame(blob).decompress() if e["kind"] == "frame"
                    else blosckit.decompress(blob, max_nbytes=1 << 24))
            assert hashlib.sha256(data).hexdigest() == e["expect"]["decode"]["sha256"]
            assert len(data) == e["expect"]["decode"]["nbytes"]
            decodable.append((blob, e))
            if "array" in e["expect"]:
                arrays += 1
                want = e["expect"]["array"]
                try:
                    b = blosckit.open_frame(blob).b2nd
                    items = b.read()
                except blosckit.FormatError as err:
                    assert want.get("reject") == {"offset": err.offset, "rule": err.rule,
                                                  "path": err.path}
                else:
                    assert [list(b.shape), b.dtype] == [want["shape"], want["dtype"]]
                    assert hashlib.sha256(items).hexdigest() == want["sha256"]
        else:
            rej = e["expect"]["reject"]
            assert (out.rule, out.offset, out.path) == (rej["rule"], rej["offset"], rej["path"])
    assert arrays > 0
    # and C-Blosc2 agrees with the manifest except for the documented divergences
    # (frames: its digest also covers the metalayers, as fuzz.frame_digest)
    for kind in ("chunk", "frame"):
        todo = [(b, e) for b, e in decodable if e["kind"] == kind]
        assert todo, kind
        verdicts = fuzz.c_blosc2_verdicts([b for b, _ in todo], kind=kind)
        for (blob, e), v in zip(todo, verdicts):
            if e["c_blosc2_divergences"]:
                continue
            want = (e["expect"]["decode"]["sha256"] if kind == "chunk" else
                    fuzz.frame_digest(blosckit.open_frame(blob)).hex())
            assert v.digest is not None and v.digest.hex() == want, e


@pytest.mark.atheris
def test_atheris_targets_run_on_the_corpus(tmp_path):
    """The atheris harness, for a few seconds on a seed corpus (skipped
    where atheris is not installed, and failing then under
    BLOSCKIT_REQUIRE_ORACLES=1 where the fuzz extra installs it)."""
    oracle("atheris")
    seeds = tmp_path / "seeds"
    fuzz.write_corpus(seeds, 30)
    (seeds / "manifest.json").unlink()
    harness = Path(__file__).parent / "fuzz" / "atheris_targets.py"
    for target in ("decompress", "open_frame", "validate"):
        # in tmp_path: libFuzzer writes a finding (crash-<sha1>) to its
        # working directory, which must not be the checkout
        r = subprocess.run([sys.executable, str(harness), target, str(seeds),
                            "-max_total_time=3", "-rss_limit_mb=4096"],
                           capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert r.returncode == 0, r.stderr[-2000:]
    # every reader and tool under its memory bound: it stops at the first
    # slip, which must be one of the known classes
    r = subprocess.run([sys.executable, str(harness), "readers", str(seeds),
                        "-max_total_time=3", "-rss_limit_mb=4096"],
                       capture_output=True, text=True, timeout=300, cwd=tmp_path)
    if r.returncode != 0:
        # atheris prints the uncaught exception on stdout, libFuzzer on stderr
        found = re.findall(r"Slip\(reader='([^']*)', kind='([^']*)', detail='([^']*)'",
                           r.stdout + r.stderr)
        assert found, (r.stdout + r.stderr)[-3000:]
        assert unknown_slips(" ".join(x for x in f if x) for f in found) == [], found
    # --sanitize: the native library built under AddressSanitizer, and the
    # run coverage-guided on it (libFuzzer's "cov:" counts grow)
    from sanitize_build import probe
    why = probe(tmp_path)
    if why is not None:
        pytest.skip(f"no usable sanitizers for --sanitize: {why}")
    r = subprocess.run([sys.executable, str(harness), "--sanitize", "open_frame", str(seeds),
                        "-max_total_time=5", "-rss_limit_mb=8192"],
                       capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "sanitized native library:" in r.stderr
    assert "no interesting inputs" not in r.stderr and " cov: " in r.stderr


def test_vl_chunk_with_nbytes_0_and_blocks_is_vl7():
    """Found by the fuzzer: a VL-block chunk whose nbytes was set to 0 still
    holds blocks; blosckit returned b'' where C-Blosc2 refuses.  The block
    sizes must add up to nbytes (VL7), on both decoder paths."""
    blob = (Path(__file__).parent / "data" / "fuzz-found" /
            "vl-chunk-nbytes-0-with-blocks.bin").read_bytes()
    for python in (False, True):
        with (helpers.python_reader() if python else contextlib.nullcontext()):
            with pytest.raises(blosckit.FormatError) as e:
                blosckit.decompress(blob)
        assert (e.value.rule, e.value.offset) == ("VL7", 40)
    assert [p.rule for p in blosckit.validate(blob)] == ["VL7"]
    v, = fuzz.c_blosc2_verdicts([blob])
    assert not v.b2_ok


def test_minimise_keeps_the_case_and_simplifies_it():
    """The minimiser cuts and zeroes while the classification holds: here,
    while blosckit still rejects the chunk for the same rule."""
    chunk = blosckit.compress(bytes(range(256)) * 64, typesize=4, codec="zstd")
    bad = bytearray(chunk)
    bad[30] |= 0x40                                   # T-flags2
    rule = fuzz.blosckit_outcome(bytes(bad), "chunk").rule

    def same(b):
        return fuzz.blosckit_outcome(b, "chunk").rule == rule
    small = fuzz._minimise(bytes(bad), "chunk", same)
    assert same(small) and rule == "T-flags2"
    assert len(small) <= 32 and sum(map(bool, small)) < sum(map(bool, bad[:32]))


def test_metalayer_name_of_nul_bytes_is_v20():
    """Found by the differential fuzzer: a metalayer name corrupted to four
    NUL bytes, which C-Blosc2 lists as "" (names are C strings to it)."""
    blob = (Path(__file__).parent / "data" / "fuzz-found" /
            "metalayer-name-of-nul-bytes.b2frame").read_bytes()
    ours = fuzz.blosckit_outcome(blob, "frame")
    theirs, = fuzz.c_blosc2_verdicts([blob], kind="frame")
    # the frame also has variable-size chunks (chunksize 0): V22 applies too
    assert blosckit.open_frame(blob).chunksize == 0
    assert fuzz.classify(blob, "frame", ours, theirs) == \
        ("c-wrong-data", "known divergence V20, V22")
    assert [p.rule for p in blosckit.validate(blob)] == ["V20", "V22"]


def test_a_wrong_read_caused_by_an_earlier_input_names_that_input(tmp_path, monkeypatch):
    """C-Blosc2 runs a whole batch in one process: an input that damages
    its memory without crashing makes a later one read wrongly.  Judged
    again alone, the later one agrees; bisection finds the culprit.  Here a
    fake oracle plays C-Blosc2 with input 5 as the culprit."""
    blobs = [blosckit.compress(bytes([k]) * 64, typesize=1) for k in range(9)]
    victim = 7

    def fake(batch, kind="chunk", timeout=600):
        out, damaged = [], False
        for b in batch:
            data = blosckit.decompress(b)
            if damaged and b == blobs[victim]:
                data = b"wrong"
            damaged = damaged or b == blobs[5]
            out.append(fuzz.Verdict(True, None, hashlib.sha256(data).digest()))
        return out
    monkeypatch.setattr(fuzz, "c_blosc2_verdicts", fake)
    ours = fuzz.blosckit_outcome(blobs[victim], "chunk")
    found = fuzz.classify(blobs[victim], "chunk", ours, fake(blobs)[victim])
    assert found == ("c-wrong-data", "NEW: no known divergence explains it")
    report = fuzz.FuzzReport()
    category, why = fuzz._alone(blobs, victim, "chunk", ours, found, tmp_path, report)
    assert category == "c-memory" and "after input 5 of its batch" in why and "alone" in why
    name = report.new_cases[0]
    assert (tmp_path / f"{name}-culprit.bin").read_bytes() == blobs[5]
    assert (tmp_path / f"{name}-victim.bin").read_bytes() == blobs[victim]
    # a disagreement that holds alone stays what it was
    other = fuzz.blosckit_outcome(blobs[0], "chunk")
    assert fuzz._alone([blobs[victim]], 0, "chunk", other, found, None, report) == found
    # one that neither holds alone nor comes back after the batch: flaky
    assert fuzz._alone([blobs[victim]], 0, "chunk", ours, found, None, report)[0] == "c-flaky"


def test_a_refused_chunk_changes_how_c_blosc2_reads_the_next_one():
    """Found by the fuzzer (c-memory): C-Blosc2 refuses this 32-byte header
    but keeps its filters_meta in python-blosc2's decompression context; the
    next chunk with a 16-byte header is then unshuffled with item size 11.
    blosckit refuses the header and reads the next chunk right.  If a
    C-Blosc2 release fixes this, the first assertion fails: move the case to
    a 'fixed in' note in specs/divergences.md."""
    folder = Path(__file__).parent / "data" / "c-blosc2-state"
    culprit = (folder / "stale-filters-meta.bin").read_bytes()
    want = json.loads((folder / "stale-filters-meta.json").read_text())["blosckit"]
    data = bytes(range(256)) * 31
    victim = blosckit.compress(data, typesize=8, format="blosc1", codec="lz4")
    alone, = fuzz.c_blosc2_verdicts([victim])
    after = fuzz.c_blosc2_verdicts([culprit, victim])
    assert alone.digest == hashlib.sha256(data).digest()
    assert not after[0].b2_ok and not after[0].crashed
    assert after[1].b2_ok and after[1].digest != alone.digest       # C-Blosc2's slip
    out = fuzz.blosckit_outcome(culprit, "chunk")
    assert (out.rule, out.offset, out.path) == (want["rule"], want["offset"], want["path"])
    assert blosckit.decompress(victim) == data


def test_rules_on_a_truncated_extended_header_do_not_run():
    """Found by atheris (validate target): a 16-byte input announcing an
    extended header with codec format 6; validate ran T-udcodec on bytes
    that are not there and reported offset 22 of a 16-byte input.  Rules on
    extended-header fields need the extended header.  Its cbytes says the
    chunk is shorter than that header: the chunk is at fault (H6), not the
    input (no truncation is claimed)."""
    blob = (Path(__file__).parent / "data" / "fuzz-found" /
            "truncated-extended-header-udcodec.bin").read_bytes()
    problems = blosckit.validate(blob)
    cbytes = int.from_bytes(blob[12:16], "little", signed=True)
    assert len(blob) == 16 and 16 <= cbytes < 32
    assert [(p.rule, p.path) for p in problems] == [("H6", "chunk.header.cbytes")]
    assert all(0 <= p.offset <= len(blob) for p in problems)
    # every cut of an extended header, with every extended field set
    full = bytearray(blosckit.compress(bytes(range(64)) * 4, typesize=4))
    full[2] |= 0xC0                                   # codec format 6
    full[22], full[30], full[31] = 1, 0xFE, 0x70      # udcodec, flags2, special
    for n in range(16, 32):
        assert all(p.offset <= n for p in blosckit.validate(bytes(full[:n]))), n


def test_extended_header_flags_on_a_17_byte_version_2_chunk_stop_at_the_cut():
    """Found by atheris (validate target) beside the case above: 17 bytes of
    a version-2 header whose flags announce an extended header (shuffle and
    bitshuffle both set) and codec format 6, with cbytes claiming 4096.
    validate reported T-udcodec at offset 22 of the 17-byte input; only the
    missing extended header (H7) and the cbytes beyond the input (H14) are
    there to report, both at the input's end: one truncation, named where the
    input ends (inside the extended header)."""
    blob = (Path(__file__).parent / "data" / "fuzz-found" /
            "extended-header-flags-on-a-17-byte-version-2-chunk.bin").read_bytes()
    assert len(blob) == 17 and blob[0] == 2 and blob[2] & 0x05 == 0x05 and blob[2] >> 5 == 6
    problems = blosckit.validate(blob)
    assert [(p.rule, p.offset, p.path) for p in problems] == \
        [("T-truncated", 17, "chunk.header.extended")]
    assert problems[0].message == ("the input ends at byte 17, inside chunk.header.extended "
                                   "(32 bytes needed, 17 there)")
    for python in (False, True):
        with (helpers.python_reader() if python else contextlib.nullcontext()):
            with pytest.raises(blosckit.FormatError) as e:
                blosckit.decompress(blob)
        assert (e.value.rule, e.value.offset, e.value.path) == \
            ("T-truncated", 17, "chunk.header.extended")
    # C-Blosc2 reads past these 17 bytes (the extended header it expects is
    # not there), so its answer depends on the memory after them: in a batch
    # of 200 it once decoded the blob, and one of five copies now and then.
    # It refuses nearly always; ask twenty times.
    verdicts = fuzz.c_blosc2_verdicts([blob] * 20)
    assert sum(not v.b2_ok for v in verdicts) >= 15
    assert all(v.b1_ok is False for v in verdicts)


def test_a_rule_on_an_older_layout_reports_that_layout_s_offset():
    """Found by atheris (validate target; the input had been committed at
    the repository root as crash-c4d8bfd3...): the first 67 bytes of an
    11-element header whose bool at 0x3F is 0x01.  validate reported
    F-vlmeta-flag at offset 68, where the byte sits in today's layout, past
    the end of the input; in the 11-element layout it is at 0x3F."""
    blob = (Path(__file__).parent / "data" / "fuzz-found" /
            "older-layout-vlmeta-flag-past-the-end.b2frame").read_bytes()
    assert len(blob) == 67 and blob[0] == 0x9B and blob[0x3F] == 0x01
    problems = blosckit.validate(blob)
    assert all(0 <= p.offset <= len(blob) for p in problems), problems
    assert ("F-vlmeta-flag", 0x3F) in {(p.rule, p.offset) for p in problems}


def test_array_disagreements_are_classified():
    """Found by the differential fuzzer once it compared n-d arrays: an
    extent's msgpack marker damaged (0xd2 -> 0x5d).  C-Blosc2 never looks at
    those markers and reads the array; blosckit refuses the value (F-b2nd),
    a stricter rule, and reads the frame's chunks alike."""
    blob = (Path(__file__).parent / "data" / "fuzz-found" /
            "b2nd-extent-marker-damaged.b2frame").read_bytes()
    ours = fuzz.blosckit_outcome(blob, "frame")
    theirs, = fuzz.c_blosc2_verdicts([blob], kind="frame")
    assert ours.digest == theirs.digest and theirs.array_ok
    assert isinstance(ours.array, blosckit.FormatError) and ours.array.rule == "F-b2nd"
    assert ours.array.path == "frame.metalayers['b2nd'].blockshape.marker"
    category, why = fuzz.classify(blob, "frame", ours, theirs)
    assert category == "blosckit-rejects" and "C-Blosc2 reads the array" in why
    assert fuzz._label(why) == "stricter rule F-b2nd"

