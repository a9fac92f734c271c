"""Frames behind URLs: read by byte ranges from a local HTTP server on
127.0.0.1 that counts requests; opening a 10,000-chunk frame costs at most 3
requests, reading one chunk 1; what is read equals python-blosc2's reading
of the same file."""
from __future__ import annotations

import http.server
import re
import threading
from pathlib import Path

import pytest

import blosckit
import cli_runner
from oracles import oracle

np = oracle("numpy")
blosc2 = oracle("blosc2")
fsspec = pytest.importorskip("fsspec", reason="the remote extra (fsspec) is not installed")
pytest.importorskip("aiohttp", reason="fsspec's HTTP needs aiohttp (the remote extra)")


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, root: Path):
        self.root, self.log = root, []
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(http.server.BaseHTTPRequestHandler):
    """HEAD and GET with one byte range, as object stores answer them."""

    def log_message(self, *args):
        pass

    def _body(self):
        data = (self.server.root / self.path.lstrip("/")).read_bytes()
        m = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
        if m is None:
            return 200, data, None
        a = int(m[1])
        b = min(int(m[2]) + 1, len(data)) if m[2] else len(data)
        return 206, data[a:b], f"bytes {a}-{b - 1}/{len(data)}"

    def do_HEAD(self):
        self.server.log.append(("HEAD", self.headers.get("Range")))
        size = (self.server.root / self.path.lstrip("/")).stat().st_size
        self.send_response(200)
        self.send_header("Content-Length", str(size))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()

    def do_GET(self):
        self.server.log.append(("GET", self.headers.get("Range")))
        status, body, span = self._body()
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Accept-Ranges", "bytes")
        if span:
            self.send_header("Content-Range", span)
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("served")
    # 10,000 chunks of 400 bytes (python-blosc2 takes seconds to write so
    # many; what is read remotely is compared with its reading of the file)
    (root / "many.b2frame").write_bytes(blosckit.compress_frame(
        np.arange(1_000_000, dtype="<i4"), chunksize=400, codec="lz4"))
    # a 3-d array with edge chunks, 8 MB of random numbers: most of it is
    # fetched neither with the header nor with the tail
    a = np.random.default_rng(5).random((100, 100, 100))
    blosc2.asarray(a, chunks=(30, 40, 64), blocks=(10, 20, 32), urlpath=str(root / "a.b2nd"),
                   mode="w")
    server = _Server(root)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", server, root, a
    server.shutdown()


def _count(server, fn):
    server.log.clear()
    out = fn()
    return out, list(server.log)


def test_open_costs_at_most_3_requests_and_a_chunk_1(served):
    url, server, root, _ = served
    f, log = _count(server, lambda: blosckit.open_frame(f"{url}/many.b2frame"))
    assert f.nchunks == 10_000
    assert len(log) <= 3, log
    data, log = _count(server, lambda: f.decompress_chunk(7_777))
    assert data == blosc2.open(str(root / "many.b2frame")).decompress_chunk(7_777)
    assert len(log) == 1 and log[0][1] is not None, log          # one byte range
    again, log = _count(server, lambda: f.decompress_chunk(7_777))
    assert again == data and log == []                           # fetched once
    whole, log = _count(server, f.decompress)
    assert whole == bytes(blosc2.open(str(root / "many.b2frame"))[:])
    assert len(log) == 1, log                                    # the section, once
    f.close()


def test_an_array_region_fetches_only_its_chunks(served):
    url, server, root, a = served
    with blosckit.open_frame(f"{url}/a.b2nd") as f:
        region, log = _count(server, lambda: f.b2nd[35:50, 38:45, 70:])
        assert (region == a[35:50, 38:45, 70:]).all()
        # rows 35..49 lie in chunk row 1, columns 38..44 in chunk columns 0
        # and 1, depth 70.. in chunk depth 1: two chunks, one request each
        assert len(log) == 2, log
        assert (f.b2nd.array() == blosc2.open(str(root / "a.b2nd"))[...]).all()


def test_validate_and_the_cli_take_urls(served):
    url, server, root, _ = served
    assert blosckit.validate(f"{url}/a.b2nd") == []
    r = cli_runner.blosckit("info", f"{url}/many.b2frame", "--json")
    assert r.returncode == 0, r.stderr
    assert '"nchunks": 10000' in r.stdout
    r = cli_runner.blosckit("validate", f"{url}/nope.b2frame")
    assert r.returncode == 1 and "Traceback" not in r.stderr


def test_a_damaged_remote_frame_is_a_format_error_with_its_offset(served):
    url, server, root, _ = served
    good = (root / "many.b2frame").read_bytes()
    (root / "cut.b2frame").write_bytes(good[:len(good) // 2])
    with pytest.raises(blosckit.FormatError) as e:
        blosckit.open_frame(f"{url}/cut.b2frame")
    assert e.value.rule == "T-truncated"
    local = [(p.rule, p.offset) for p in blosckit.validate(root / "cut.b2frame")]
    assert [(p.rule, p.offset) for p in blosckit.validate(f"{url}/cut.b2frame")] == local


def test_file_urls_read_as_paths(served):
    _, _, root, _ = served
    with blosckit.open_frame(f"file://{root / 'many.b2frame'}") as f:
        assert f.decompress_chunk(3) == np.arange(300, 400, dtype="<i4").tobytes()


def test_a_frame_store_by_url_reads_only_the_chunks_a_region_touches(served):
    """blosckit.zarr.FrameStore over a URL: zarr's reading equals
    python-blosc2's, and a region costs one request per chunk it touches."""
    zarr = oracle("zarr")
    from blosckit.zarr import FrameStore
    url, server, root, a = served
    store, log = _count(server, lambda: FrameStore(f"{url}/a.b2nd"))
    assert len(log) <= 3, log
    z = zarr.open_array(store, mode="r")
    region, log = _count(server, lambda: z[35:50, 38:45, 70:])
    assert (region == a[35:50, 38:45, 70:]).all()
    assert len(log) == 2, log
    assert (z[...] == blosc2.open(str(root / "a.b2nd"))[...]).all()
