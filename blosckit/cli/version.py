"""``blosckit --version``: the version and which paths of this build are
native."""
from __future__ import annotations

import argparse
from typing import Any, NoReturn, Sequence

from .. import __version__
from ..codecs.buildinfo import native_info


class VersionAction(argparse.Action):
    """``--version``: the version and the native paths, then exit."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 **kw: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kw)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> NoReturn:
        print(f"blosckit {__version__}")
        print("\n".join(native_lines()))
        parser.exit()


def native_lines() -> list[str]:
    """``native_info()`` as a few readable lines."""
    try:
        info = native_info()
    except Exception as e:          # noqa: BLE001 -- report, do not crash --version
        return [f"native: unavailable ({type(e).__name__}: {e})"]
    lines = []
    for key, value in info.items():
        if not isinstance(value, dict):
            lines.append(f"{key}: {_brief(value)}")
            continue
        lines.append(f"{key}:")
        for sub, v in value.items():
            lines.append(f"  {sub:10} {_codec_line(v) if _is_codec(v) else _brief(v)}")
    return lines


def _is_codec(v: Any) -> bool:
    return isinstance(v, dict) and "encode" in v and "decode" in v


def _codec_line(v: dict) -> str:
    """One codec: its encode and decode paths, and why identity is not claimed."""
    text = f"encode {_brief(v['encode'])}; decode {_brief(v['decode'])}"
    if v.get("available") is False:
        text = "not available; " + text
    if v.get("byte_identical") is False and v.get("caveat"):
        text += f"; not byte-identical: {v['caveat']}"
    return text


def _brief(v: Any) -> str:
    """A value of ``native_info()`` in a few words."""
    if isinstance(v, dict) and "path" in v:
        detail = ", ".join(str(v[k]) for k in ("via", "library", "version") if v.get(k))
        return f"{v['path']} ({detail})" if detail else str(v["path"])
    if isinstance(v, dict):
        return ", ".join(f"{k} {_brief(w)}" for k, w in v.items())
    if isinstance(v, (list, tuple)):
        return ", ".join(map(str, v))
    return str(v)
