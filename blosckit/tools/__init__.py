"""Tools over chunks and frames: validation (:mod:`.validate`), inspection
(:mod:`.inspect`), salvage (:mod:`.salvage`), scanning (:mod:`.scan`) and the
table of what C-Blosc2 and C-Blosc read otherwise (:mod:`.divergences`).
The public functions are exported by :mod:`blosckit`; nothing is imported
here, so that ``blosckit.tools.validate`` names the module."""
