from compendium.pipeline.schemas import DD_RUN, SEED_MAX
from compendium.pipeline.schemas.ssdd_teacher import SOURCE, source_problems
from compendium.pipeline.spec import Param

SECTION = "ssdd_distill"
DATA = ("fashion-mnist",)
SCHEMA = {
    "seed": Param("int", "seed of every synthesis", low=0, high=SEED_MAX),
    **SOURCE,
    "budget_n": Param("int", "the main storage budget N, in images' worth of floats (N x 784)", low=1, high=100000),
    "budgets": Param("list[int]", "Table 2's budgets (must include budget_n)", low=1, high=100000, nonempty=True),
    "basis_mult": Param("int", "U = V = basis_mult x N, at most the dimension (Table 5: 2)", low=1, high=100),
    "s": Param(
        "int",
        "downscale factor of the image bases (28 -> 28/s; SSDD App. A.1: 2 on CIFAR-100, 32 -> 16)",
        choices=(1, 2, 4, 7),
    ),
    "augmentation": Param("str", "the predefined views", choices=("none", "rotation", "jigsaw", "crop")),
    "hidden": Param("int", "hidden width of the approximation networks (4 for CIFAR-100)", low=1, high=1024),
    "approx_variants": Param("list[str]", "Table 11's other variants: same, bias, ideal or q<hidden> (e.g. q2, q8)"),
    "approx_steps": Param("int", "Adam steps fitting each approximation model", low=1, high=100_000),
    "ablation_augmentations": Param(
        "list[str]", "Table 12's other augmentations", choices=("none", "rotation", "jigsaw", "crop")
    ),
    "ablation_inits": Param("list[str]", "Table 4's other initialisations", choices=("real", "random")),
    "free_teachers": Param("list[str]", "free teachers (names of the ssdd_teacher targets: rand, digits_byol)"),
    "steps": Param("int", "outer steps (30,000 in the paper)", low=0, high=1_000_000),
    "lr": Param("float", "SSDD outer AdamW learning rate (1e-3, linear decay)", low=0.0, high=1.0),
    "krrst_lr": Param("float", "KRR-ST outer learning rate (its README: 1e-4 for 160,000 steps)", low=0.0, high=1.0),
    "real_batch": Param("int", "real images per outer step (1,024 in KRR-ST's code)", low=2, high=16_384),
    "lam_rel": Param("float", "KRR ridge: lam_rel x tr(K) (1e-6)", low=0.0, high=1.0),
    "inner_width": Param(
        "int",
        "width of the inner ConvNet (BatchNorm, flattened features; 3 blocks at up to 32 px, 4 at 64 px)",
        low=4,
        high=1024,
    ),
    "pool_size": Param("int", "L, the model pool (10)", low=1, high=100),
    "pool_steps": Param("int", "Z, steps before a pool model is reset (1,000)", low=2, high=100000),
    "matching_ipc": Param("int", "images per class of Table 1's labelled baselines (DSA, DM)", low=1, high=1000),
    "matching_methods": Param(
        "list[str]",
        "Table 1's labelled baselines, made with dd_matching's settings (empty: none)",
        choices=("dsa", "dm"),
    ),
    "workers": Param("int", "single-threaded worker processes (0: in the notebook's process)", low=0, high=64),
    "device": DD_RUN["device"],
    "dpi": Param("int", "PNG resolution", low=50, high=150),
}

APPROX_NAMES = ("same", "bias", "ideal")
INITS = ("pca", "real", "random")


def approx_ok(name: str) -> bool:
    """A Table 11 variant name: ``same``, ``bias``, ``ideal`` or ``q<hidden>`` with hidden >= 1 (the rule
    of ``compendium.distill.ssdd.parse_approx``)."""
    return name in APPROX_NAMES or (name.startswith("q") and name[1:].isdigit() and int(name[1:]) >= 1)


def check(values: dict) -> list[str]:
    """The main budget is one of Table 2's budgets; the approximation variants and the initialisations
    are known names; a non-shipped source has a ``data_root``."""
    errs = source_problems(values)
    if "budget_n" in values and values["budget_n"] not in values.get("budgets", []):
        errs.append(f"budget_n: {values['budget_n']} must be one of budgets {values.get('budgets')}; add it to budgets")
    bad = [v for v in values.get("approx_variants", []) if not approx_ok(str(v))]
    if bad:
        errs.append(f"approx_variants: unknown {bad}; use same, bias, ideal or q<hidden> (e.g. q2, q8)")
    bad = sorted(set(values.get("ablation_inits", [])) - set(INITS))
    if bad:
        errs.append(f"ablation_inits: unknown inits {bad}; known {list(INITS)}")
    return errs
