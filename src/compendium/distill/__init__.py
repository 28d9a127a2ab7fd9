"""Labeled dataset distillation (issue 7): one on-disk format for a distilled set (:mod:`.sets`),
one evaluation (:mod:`.evaluate`), and the methods: coresets and simple baselines (:mod:`.coresets`),
gradient and distribution matching (DC, DSA, DM: :mod:`.matching`), kernel inducing points (KIP, LS:
:mod:`.kip`), and teacher inversion (SRe2L, DWA, RDED: :mod:`.inversion`)."""
