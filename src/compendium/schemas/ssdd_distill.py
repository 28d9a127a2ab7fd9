from ..params import P

SECTION = "ssdd_distill"
DATA = ("fashion-mnist",)
SCHEMA = {
    "seed": P("int", "seed of every synthesis", low=0),
    "budget_n": P("int", "the main storage budget N, in images' worth of floats (N x 784)", low=1, high=100000),
    "budgets": P("list[int]", "Table 2's budgets (must include budget_n)", low=1, high=100000, nonempty=True),
    "basis_mult": P("int", "U = V = basis_mult x N, at most the dimension (Table 5: 2)", low=1, high=100),
    "s": P("int", "downscale factor of the image bases (28 -> 28/s)", choices=(1, 2, 4, 7)),
    "augmentation": P("str", "the predefined views", choices=("none", "rotation", "jigsaw", "crop")),
    "hidden": P("int", "hidden width of the approximation networks (4 for CIFAR-100)", low=1, high=1024),
    "approx_variants": P("list[str]", "Table 11's other variants: same, bias, ideal or q<hidden> (e.g. q2, q8)"),
    "approx_steps": P("int", "Adam steps fitting each approximation model", low=1),
    "ablation_augmentations": P("list[str]", "Table 12's other augmentations", choices=("none", "rotation", "jigsaw", "crop")),
    "ablation_inits": P("list[str]", "Table 4's other initialisations", choices=("real", "random")),
    "free_teachers": P("list[str]", "free teachers (names of the ssdd_teacher targets: rand, digits_byol)"),
    "steps": P("int", "outer steps (30,000 in the paper)", low=0, high=1_000_000),
    "lr": P("float", "SSDD outer AdamW learning rate (1e-3, linear decay)", low=0.0, high=1.0),
    "krrst_lr": P("float", "KRR-ST outer learning rate (its README: 1e-4 for 160,000 steps)", low=0.0, high=1.0),
    "real_batch": P("int", "real images per outer step (1,024 in KRR-ST's code)", low=2),
    "lam_rel": P("float", "KRR ridge: lam_rel x tr(K) (1e-6)", low=0.0),
    "inner_width": P("int", "width of the inner ConvNet-3 (BatchNorm, flattened features)", low=4, high=1024),
    "pool_size": P("int", "L, the model pool (10)", low=1, high=100),
    "pool_steps": P("int", "Z, steps before a pool model is reset (1,000)", low=2, high=100000),
    "workers": P("int", "single-threaded worker processes (0: in the notebook's process)", low=0, high=64),
    "dpi": P("int", "PNG resolution", low=50, high=150),
}
