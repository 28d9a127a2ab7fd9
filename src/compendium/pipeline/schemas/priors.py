import re

from compendium.rela import priors as rela_priors
from compendium.pipeline.schemas import DATASET, PROTOCOL, SEED_MAX
from compendium.pipeline.schemas._rela import priors_param
from compendium.pipeline.spec import Param

SECTION = "priors"
DATA = ("fashion-mnist", "digits")  # `dataset` and, at cpu scale, `cross_dataset`

#: Training-split sizes of the datasets D can be drawn from (the digits: 75% of 1,797, the seeded split).
TRAIN_SIZES = {
    "fashion-mnist": 60_000,
    "digits": 1347,
    "cifar10": 50_000,
    "cifar100": 50_000,
    "tiny-imagenet": 100_000,
    "imagenet": 1_281_167,
}

#: the keys of one declared prior (``extra_priors``)
EXTRA_KEYS = ("name", "dataset", "epochs")


def extra_prior_problem(entry: dict) -> str | None:
    """Why one ``extra_priors`` entry cannot be trained, or None."""
    if set(entry) != set(EXTRA_KEYS):
        return f"{entry!r}: give exactly the keys {', '.join(EXTRA_KEYS)}"
    name, dset, epochs = entry["name"], entry["dataset"], entry["epochs"]
    if not (isinstance(name, str) and re.fullmatch(r"[a-z0-9][a-z0-9_]*", name)):
        return f"name {name!r}: lower-case letters, digits and _ (it names models/priors/<name>.pt)"
    if dset not in TRAIN_SIZES:
        return f"dataset {dset!r}: one of {', '.join(TRAIN_SIZES)}"
    if not (isinstance(epochs, int) and not isinstance(epochs, bool) and 1 <= epochs <= 5000):
        return f"epochs {epochs!r}: an integer in [1, 5000]"
    return None


SCHEMA = {
    "seed": Param("int", "seed of the supervised prior and of the rand prior's initialisation", low=0, high=SEED_MAX),
    **DATASET,
    "cross_dataset": Param(
        "str",
        "dataset of the cross-dataset BYOL prior (digits at cpu scale, shipped)",
        choices=("digits", "fashion-mnist", "cifar10", "cifar100", "tiny-imagenet", "imagenet"),
    ),
    **{k: PROTOCOL[k] for k in ("width", "depth", "norm", "global_pool")},
    "sup_epochs": Param("int", "epochs of the supervised prior", low=1, high=500),
    "sup_batch_size": Param("int", "batch size of the supervised prior", low=8, high=16_384),
    "sup_lr": Param("float", "Adam learning rate of the supervised prior", low=0.0, high=1.0),
    "train_n": Param(
        "int", "training images of `dataset` used: D (60000 = all of Fashion-MNIST)", low=100, high=2_000_000
    ),
    "byol_epochs": Param("int", "epochs of the BYOL prior on `dataset` (full budget: BYOL* seed 0)", low=1, high=1000),
    "cross_byol_epochs": Param("int", "epochs of the BYOL prior on `cross_dataset`", low=1, high=5000),
    "byol_batch_size": Param("int", "batch size of the BYOL priors", low=8, high=16_384),
    "rand_seeds": Param(
        "list[int]",
        "seeds of the rand prior's targets besides `seed` (camera-ready Table 2's one "
        "random network for every student, on each of rela_arch's seeds)",
        low=0,
        high=SEED_MAX,
        nonempty=True,
    ),
    "replicate_seeds": Param(
        "list[int]",
        "further seeds on which every trained prior is trained again "
        "(models/prior_replicates/<name>_seed<s>.pt): BYOL* replicates and the per-seed priors of "
        "rela_budget",
        low=0,
        high=SEED_MAX,
    ),
    "extra_priors": Param(
        "list[dict]",
        "further BYOL priors, each {name, dataset, epochs}: trained after the three roles, with their seed "
        "replicates, to models/priors/<name>.pt; a stage names one as trained:priors/<name>.pt",
        validate=extra_prior_problem,
    ),
    "priors": priors_param("priors to make targets for: rand, trained:<file>"),
    "order": Param(
        "str",
        "target map: PCA then z-score (code) or z-score then PCA (paper eq. 10)",
        choices=("code", "paper", "correlation"),
    ),
    "batch_size": Param("int", "inference batch of the target generation", low=1, high=65_536),
    "cpu_bf16": Param(
        "bool",
        "bf16 autocast of the SSL pre-training on the CPU (AMX / AVX512-BF16 CPUs: 1.5x on the BYOL step; false: fp32)",
    ),
    "device": Param("str", "auto (CUDA when present), cpu or cuda", choices=("auto", "cpu", "cuda")),
    "nproc": Param(
        "int",
        "processes of each BYOL prior's training under torchrun with DDP (one per GPU; 1: the stage's own process)",
        low=1,
        high=64,
    ),
    "dpi": Param("int", "PNG resolution", low=50, high=150),
}


def check(values: dict) -> list[str]:
    """The stage makes three trained priors, named after the datasets
    (:func:`compendium.rela.priors.trained_names`), and the ``extra_priors`` it is given, each named once; the
    cross-dataset prior needs another dataset; D is ``train_n`` images of the training split."""
    errs = []
    made = set(rela_priors.trained_specs(values["dataset"], values["cross_dataset"]).values())
    extra = [e.get("name") for e in values["extra_priors"] if isinstance(e, dict)]
    clash = sorted(
        {n for i, n in enumerate(extra) if n in extra[:i]} | {n for n in extra if f"trained:priors/{n}.pt" in made}
    )
    if clash:
        errs.append(f"extra_priors: {clash} named twice, or as a role's prior; give each prior its own name")
    made |= {f"trained:priors/{n}.pt" for n in extra}
    unknown = [p for p in values["priors"] if p.startswith("trained:priors/") and p not in made]
    if unknown:
        errs.append(f"priors: {unknown} are not made by this stage (it makes {sorted(made)}); use those or rand")
    if values["cross_dataset"] == values["dataset"]:
        errs.append(f"cross_dataset: {values['cross_dataset']!r} is `dataset` too; choose another dataset")
    if values["seed"] in values["replicate_seeds"] or len(set(values["replicate_seeds"])) < len(
        values["replicate_seeds"]
    ):
        errs.append(
            f"replicate_seeds: {values['replicate_seeds']} repeats a seed or holds `seed` "
            f"({values['seed']}), whose run is each prior itself; list each other seed once"
        )
    size = TRAIN_SIZES.get(values["dataset"])
    if size is not None and values["train_n"] > size:
        errs.append(f"train_n: {values['train_n']} > the {size} training images of {values['dataset']}; lower train_n")
    return errs
