"""Codec and filter implementations, looked up through :mod:`.registry`."""
from .registry import CODECS_BY_CODE, CODECS_BY_FORMAT, CODECS_BY_NAME, Codec

__all__ = ["Codec", "CODECS_BY_CODE", "CODECS_BY_FORMAT", "CODECS_BY_NAME"]
