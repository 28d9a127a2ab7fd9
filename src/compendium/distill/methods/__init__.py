"""Labelled distillation methods behind one contract (:mod:`.base`), one file each, registered by family:
:mod:`.matching` (DC, DSA, DM; the dd_matching stage) and :mod:`.inversion` (SRe2L, DWA, RDED, G-VBSM; the
dd_inversion stage); their papers' settings in :mod:`.papers`. A stage imports its family's registry only, so a
change to one family's code stales only the stages that run it, and what only cites a paper's settings
(:mod:`.papers`) imports no training code."""
