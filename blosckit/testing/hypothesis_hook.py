"""The ``hypothesis`` entry point (pyproject: ``[project.entry-points.hypothesis]``).

hypothesis calls the hook while it is being imported, possibly by
``blosckit.strategies`` itself, so the strategies are looked up lazily
(``st.deferred``), not imported here.
"""
from __future__ import annotations


def _hypothesis_setup_hook() -> None:
    """``st.from_type(blosckit.Chunk)`` and ``st.from_type(blosckit.Frame)``
    draw parsed chunks and open frames from :mod:`blosckit.strategies`."""
    from hypothesis import strategies as st

    from ..chunk.read import Chunk, parse_chunk
    from ..frame.read import Frame, open_frame

    def chunk_strategy():
        from .strategies import chunks
        return chunks().map(lambda pair: parse_chunk(pair[1]))

    def frame_strategy():
        from .strategies import frames
        return frames().map(lambda pair: open_frame(pair[1]))

    st.register_type_strategy(Chunk, st.deferred(chunk_strategy))
    st.register_type_strategy(Frame, st.deferred(frame_strategy))
