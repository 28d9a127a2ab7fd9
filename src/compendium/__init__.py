"""Reproducible compendium for ReLA ("Efficiency for Free: Ideal Data Are Transportable
Representations", NeurIPS 2024) and the dataset-distillation work around it.

The package is built in one-way wings; each imports only from the wings below it:

- :mod:`compendium.core`: paths, datasets, networks, augmentation, PCA, probes, devices, the worker
  pool, the text corpus: what every experiment stands on;
- :mod:`compendium.theory`: the papers' theorems checked numerically (imports core);
- :mod:`compendium.ssl`: self-supervised losses, methods and the pre-training loop (imports core);
- :mod:`compendium.rela`: ReLA itself: targets, the lambda schedule, priors, the experiment runner
  (imports core, ssl);
- :mod:`compendium.distill`: dataset distillation, one package per family behind one set format and one
  evaluation (imports core, theory);
- :mod:`compendium.pipeline`: parameters, the notebook runner, reports, the claims ledger (imports all).
"""

__version__ = "0.1.0"
