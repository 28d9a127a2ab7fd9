"""ReLA (Efficiency for Free: Ideal Data Are Transportable Representations): targets from a prior
model and the priors stage's index of them, the lambda schedule, the priors, the experiment runner
of its tables, the smoke stage, the arms and tables of the comparison stages and the representation
similarity. Imports core and ssl."""
