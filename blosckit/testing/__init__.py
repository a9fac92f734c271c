"""Testing aids for Blosc readers: hypothesis strategies (:mod:`.strategies`,
needs hypothesis), the differential fuzzer against C-Blosc2 (:mod:`.fuzz`)
and the hypothesis entry point (:mod:`.hypothesis_hook`).  Nothing is
imported here, so that importing the package needs no optional extra."""
