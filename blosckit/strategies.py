"""``blosckit.strategies``: the hypothesis strategies, kept at this name for
users (they live in :mod:`blosckit.testing.strategies`)."""
from .testing.strategies import *  # noqa: F401,F403
from .testing.strategies import __all__  # noqa: F401
