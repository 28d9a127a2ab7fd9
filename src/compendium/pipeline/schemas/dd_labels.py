from compendium.pipeline.schemas import DD_DATASET, DD_RUN, dataset_problems
from compendium.pipeline.spec import Param

SECTION = "dd_labels"
DATA = ("fashion-mnist", "digits")
SCHEMA = {
    **DD_DATASET,
    **DD_RUN,
    "eval_lr": Param("float", "student Adam learning rate (constant, as the paper's learners)", low=0.0, high=1.0),
    "base_per_class": Param(
        "int", "base images per source class (N = 10 x this; the paper's N = 100)", low=1, high=500
    ),
    "target_n": Param(
        "int", "Fashion-MNIST training images the target batches are drawn from (paper: 50000)", low=100, high=60000
    ),
    "arch": Param(
        "str",
        "the network labels are distilled with (the paper's LeNet for MNIST-like data)",
        choices=("lenet", "mlp", "convnet"),
    ),
    "rr_steps": Param("int", "RR label-distillation steps (Algorithm 1 iterations)", low=1, high=100000),
    "so_steps": Param("int", "second-order label-distillation steps", low=1, high=100000),
    "cross_variants": Param(
        "list[str]", "variants also distilled on the digits base images", choices=("rr", "second_order")
    ),
    "inner_batch": Param("int", "base minibatch N_i per step", low=1, high=5000),
    "target_batch": Param("int", "real target minibatch N_o per step", low=1, high=60000),
    "lam": Param("float", "ridge-regression lambda (eq. 3)", low=1e-8, high=1e6),
    "alpha": Param("float", "pseudo-gradient step alpha of the global RR head", low=1e-6, high=1.0),
    "label_lr": Param("float", "Adam learning rate of the label logits", low=1e-6, high=10.0),
    "model_lr": Param("float", "Adam learning rate of the model trained alongside the labels", low=1e-6, high=1.0),
    "inner_lr": Param("float", "SGD rate of the second-order variant's differentiable inner step", low=1e-6, high=10.0),
    "inner_steps": Param("int", "differentiable inner steps of the second-order variant", low=1, high=20),
    "window": Param("int", "steps the target loss is averaged over (overfitting detection)", low=1, high=10000),
    "patience": Param("int", "non-improving steps before the model is reset", low=1, high=10000),
    "eval_sgd_lr": Param("float", "student SGD learning rate (momentum 0.9) of the optimiser test", low=0.0, high=1.0),
    "step_mults": Param(
        "list[float]", "training-step multipliers of the steps test (x eval_steps)", low=0.05, high=20.0, nonempty=True
    ),
    "archs": Param(
        "list[str]", "students of the architecture test", nonempty=True, choices=("lenet", "mlp", "convnet")
    ),
    "eval_width": Param("int", "width of the ConvNet student (instance norm)", low=4, high=1024),
}


def check(values: dict) -> list[str]:
    """Label distillation's flexibility study (Bohdal, Yang & Hospedales 2020) trains the labels distilled with
    ``arch`` at 1x steps otherwise: the grid must contain that setup (1.0 in ``step_mults``, ``arch`` in ``archs``)."""
    errs = dataset_problems(values)
    if values.get("dataset", "fashion-mnist") not in ("fashion-mnist", "mnist"):
        errs.append(
            f"dataset: {values.get('dataset')!r}: LD's cross-dataset bases take 1 x 28 x 28 images; use "
            "fashion-mnist or mnist"
        )
    if 1.0 not in values["step_mults"]:
        errs.append(f"step_mults: {values['step_mults']} must include 1.0 (the distillation setup)")
    if values["arch"] not in values["archs"]:
        errs.append(f"archs: {values['archs']} must include the distillation network {values['arch']!r}")
    return errs
