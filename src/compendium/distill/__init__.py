"""Dataset distillation: one on-disk set format (:mod:`.sets`), one evaluation of labelled sets
(:mod:`.evaluate`, :mod:`.runner`), and the families, each producing sets in that format:
coresets and simple baselines (:mod:`.coresets`), teacher inversion (SRe2L, DWA, RDED: :mod:`.inversion`),
gradient and distribution matching (DC, DSA, DM: :mod:`.matching`), kernel inducing points (KIP, LS:
:mod:`.kernel`), the unrolled methods of the reading notes (DD, SLDD, LD, GTN, Mnemonics, text DD, NAS
proxies: :mod:`.unrolled`) and self-supervised distillation (KRR-ST, SSDD: :mod:`.ssdd`)."""
