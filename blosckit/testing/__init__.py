"""Testing aids for Blosc readers: hypothesis strategies (:mod:`.strategies`,
needs hypothesis), named structure-aware mutations, one per class of
fuzzing findings (:mod:`.mutations`), every reader and tool of blosckit run
on one input under a memory bound (:mod:`.readers`), the differential fuzzer
against C-Blosc2 (:mod:`.fuzz`) and the hypothesis entry point
(:mod:`.hypothesis_hook`).  Nothing is
imported here, so that importing the package needs no optional extra."""
