"""Reproducible compendium for ReLA ("Efficiency for Free: Ideal Data Are Transportable
Representations", NeurIPS 2024) and the dataset-distillation work around it.

Modules are named after the papers' nouns: ``data``, ``models``, ``ssl``, ``rela``,
``distill``, ``theory``, ``evaluation``; ``paths``, ``params``, ``report`` and ``nbrun``
are the pipeline's plumbing.
"""

__version__ = "0.1.0"
