"""The architecture, checked on the source: format facts live in ``formats/``
only, no package reaches into another's private names, no import hides a
circle inside a function, and the modules import one another without
circles.  (The layers themselves are the import-linter contract in
pyproject.toml, which ``.ci/run`` checks with ``lint-imports``; a test here
runs it too.)"""
from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "blosckit"

# Literals that look like format facts but are not, each with its reason.
# Keyed by (path relative to blosckit/, source text of the expression).
NOT_FORMAT_FACTS = {
    ("codecs/zstd.py", 'struct.unpack_from("<I", data)'):
        "zstd's own frame magic: a codec stream's format, not Blosc's",
    ("codecs/zstd.py", 'struct.unpack_from("<I", data, 4)'):
        "the size of a zstd skippable frame: a codec stream's format",
    ("cli/output.py", "0o666 & ~mask"): "a new file's mode under the umask",
    ("testing/fuzz.py", 'struct.pack("<i", len(b))'):
        "the length prefix of the fuzz oracle's pipe protocol (ours)",
    ("testing/fuzz.py", 'struct.pack("<q", len(v))'):
        "the length of a value hashed into a verdict digest (ours)",
}


def _modules():
    for p in sorted(PKG.rglob("*.py")):
        rel = p.relative_to(PKG).as_posix()
        yield rel, p.read_text(), ast.parse(p.read_text())


def _literal(node: ast.AST, least: int = 2) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value >= least


def _format_facts(rel: str, src: str, tree: ast.AST) -> list[str]:
    """Byte positions, shifts, masks and struct layouts written as literals."""
    hits = []
    for n in ast.walk(tree):
        what = None
        if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.RShift, ast.LShift, ast.BitAnd)):
            if not (isinstance(n.left, ast.Constant) and isinstance(n.right, ast.Constant)) \
                    and (_literal(n.left) or _literal(n.right)):
                what = "shift or mask"
        elif isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name):
            s = n.slice
            if _literal(s):
                what = "byte position"
            elif isinstance(s, ast.Slice) and (_literal(s.lower) or _literal(s.upper)):
                what = "byte range"
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                and n.func.attr in ("pack", "unpack", "unpack_from", "pack_into", "Struct",
                                    "iter_unpack", "calcsize") \
                and n.args and isinstance(n.args[0], (ast.Constant, ast.JoinedStr)):
            what = "struct layout"
        if what is not None:
            text = ast.get_source_segment(src, n)
            if (rel, text) not in NOT_FORMAT_FACTS:
                hits.append(f"blosckit/{rel}:{n.lineno}: {what}: {text}")
    return hits


def test_no_format_fact_outside_formats():
    hits = []
    for rel, src, tree in _modules():
        if not rel.startswith("formats/"):
            hits += _format_facts(rel, src, tree)
    assert hits == []


def test_the_check_finds_what_it_looks_for():
    src = ("def f(chunk, x):\n    a = chunk[31] >> 4 & 7\n    b = x[16:22]\n"
           "    return struct.unpack_from('<i', chunk, 12)\n")
    hits = _format_facts("tools/x.py", src, ast.parse(src))
    kinds = sorted({h.split(": ")[1] for h in hits})
    assert kinds == ["byte position", "byte range", "shift or mask", "struct layout"]


def test_allowlist_entries_still_exist():
    # a stale entry would hide nothing but clutter: each names live code
    sources = {rel: src for rel, src, _tree in _modules()}
    assert [key for key in NOT_FORMAT_FACTS if key[1] not in sources.get(key[0], "")] == []


def _package(rel: str) -> str:
    parts = rel.split("/")
    return parts[0] if len(parts) > 1 else ""


def _imported(rel: str, node: ast.ImportFrom) -> str:
    """The absolute module an ImportFrom names (``blosckit.x.y``)."""
    here = ["blosckit", *rel[:-3].split("/")]
    if here[-1] == "__init__":
        here = here[:-1]
    else:
        here = here[:-1]
    if node.level:
        base = here[:len(here) - node.level + 1]
        return ".".join(base + ([node.module] if node.module else []))
    return node.module or ""


def _is_module(dotted: str) -> bool:
    p = ROOT.joinpath(*dotted.split("."))
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


def test_no_package_reaches_into_another_packages_private_names():
    """``from ..frame.read import _x`` and ``module._x`` on a module of
    another sub-package (instances are covered by the frame reader's
    documented internal API: Frame.buffer, entries, ...)."""
    hits = []
    for rel, src, tree in _modules():
        mine = _package(rel)
        aliases: dict[str, str] = {}
        for n in ast.walk(tree):
            if not isinstance(n, ast.ImportFrom):
                continue
            target = _imported(rel, n)
            if not target.startswith("blosckit"):
                continue
            for a in n.names:
                full = f"{target}.{a.name}"
                theirs = full.split(".")[1] if full.count(".") >= 1 else ""
                if a.name.startswith("_") and not a.name.startswith("__") \
                        and theirs != mine and target.split(".")[1:2] != [mine]:
                    hits.append(f"blosckit/{rel}:{n.lineno}: imports {a.name} from {target}")
                if _is_module(full):
                    aliases[a.asname or a.name] = full
        for n in ast.walk(tree):
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) \
                    and n.value.id in aliases and n.attr.startswith("_") \
                    and not n.attr.startswith("__"):
                theirs = aliases[n.value.id].split(".")[1]
                if theirs != mine:
                    hits.append(f"blosckit/{rel}:{n.lineno}: {n.value.id}.{n.attr}")
    assert hits == []


# Imports inside functions that are there for a reason other than a circle.
LATE_IMPORTS = {
    "testing/hypothesis_hook.py": "hypothesis calls the hook while it is itself being "
                                  "imported: the strategies are looked up when first drawn",
    "testing/fuzz.py": "hypothesis and python-blosc2 (the fuzz extra) are needed by the "
                       "fuzzer's drawing only, not by the oracle helpers the tests import",
}


def test_no_import_inside_a_function_dodges_a_circle():
    hits = []
    for rel, src, tree in _modules():
        for f in ast.walk(tree):
            if not isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for n in ast.walk(f):
                if isinstance(n, ast.ImportFrom) and (n.level or (n.module or "").startswith(
                        "blosckit")) and rel not in LATE_IMPORTS:
                    hits.append(f"blosckit/{rel}:{n.lineno}: {ast.get_source_segment(src, n)}")
                if isinstance(n, ast.Import) and any(a.name.startswith("blosckit")
                                                     for a in n.names):
                    hits.append(f"blosckit/{rel}:{n.lineno}: {ast.get_source_segment(src, n)}")
    assert hits == []


def _module_graph() -> dict[str, set[str]]:
    """Module -> the blosckit modules it imports at module level (a package
    ``__init__`` that re-exports its children is left out: importing a
    child always runs its parent first, which is not a circle of ours)."""
    graph: dict[str, set[str]] = {}
    for rel, src, tree in _modules():
        me = "blosckit." + rel[:-3].replace("/", ".")
        me = me.removesuffix(".__init__")
        if rel.endswith("__init__.py"):
            continue
        deps = graph.setdefault(me, set())
        for n in tree.body:
            if isinstance(n, ast.ImportFrom):
                target = _imported(rel, n)
                if not target.startswith("blosckit"):
                    continue
                for a in n.names:
                    full = f"{target}.{a.name}"
                    deps.add(full if _is_module(full) else target)
    return graph


def test_modules_import_each_other_without_circles():
    graph = _module_graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    circles: list[list[str]] = []
    sys.setrecursionlimit(10_000)

    def visit(v: str) -> None:            # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue                  # a package __init__ (see _module_graph)
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    assert circles == []


def test_layers_contract_holds():
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.fail("lint-imports (import-linter, in the test extra) is not installed")
    r = subprocess.run([exe], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-2000:]
