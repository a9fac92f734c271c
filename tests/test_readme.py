"""The README's fuzzing example runs as written."""
from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest
from oracles import oracle

oracle("blosc2")


README = Path(__file__).resolve().parent.parent / "README.md"


def test_the_fuzz_example_runs(tmp_path):
    text = README.read_text()
    block = re.search(r"<!-- fuzz-example -->\s*```python\n(.*?)```", text, re.S)
    assert block is not None
    # a real file, so hypothesis can show the example's source if it fails
    script = tmp_path / "readme_fuzz_example.py"
    script.write_text(block.group(1))
    namespace = runpy.run_path(str(script))
    namespace["test_my_reader_survives_damaged_chunks"]()
