"""The README's fuzzing and frame-composer examples run as written."""
from __future__ import annotations

import re
import runpy
from pathlib import Path

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


def test_the_frame_parts_example_runs(tmp_path, capsys):
    """The composer's example: its printed verdicts are the ones it shows."""
    text = README.read_text()
    block = re.search(r"<!-- parts-example -->\s*```python\n(.*?)```", text, re.S)
    assert block is not None
    script = tmp_path / "readme_parts_example.py"
    script.write_text(block.group(1))
    runpy.run_path(str(script))
    shown = [line.split("# ", 1)[1] for line in block.group(1).splitlines()
             if line.startswith("    print(") or line.startswith("print(")]
    assert capsys.readouterr().out.splitlines() == shown
