from compendium.pipeline.schemas import IMAGE_FOLDER, DD_DATASET, DD_RUN, SEED_MAX, dataset_problems
from compendium.pipeline.spec import Param

SECTION = "dd_dwa"
DATA = ("fashion-mnist",)
SCHEMA = {
    **DD_DATASET,
    **IMAGE_FOLDER,
    **DD_RUN,
    "sweep_seeds": Param(
        "list[int]",
        "evaluation seeds of the Fig. 3 sweep and dd_inversion's sets (``seeds``: the Fig. 5 "
        "grid and the reference arms)",
        low=0,
        high=SEED_MAX,
        nonempty=True,
    ),
    "cl_seeds": Param(
        "list[int]", "evaluation seeds of Table 10's class-incremental runs", low=0, high=SEED_MAX, nonempty=True
    ),
    "iterations": Param("int", "recovery iterations per batch (1000 in the paper)", low=1, high=100000),
    "cross_iterations": Param(
        "int",
        "recovery iterations of the sets distilled by the other teachers (Tables 4 and 9; 1000 in the paper)",
        low=1,
        high=100000,
    ),
    "lr": Param("float", "recovery Adam learning rate (cosine)", low=0.0, high=10.0),
    "jitter": Param("int", "random-roll jitter in pixels", low=0, high=32),
    "rho": Param("float", "DWA: total norm of the weight adjustment", low=0.0, high=10.0),
    "K": Param("int", "DWA: ascent steps", low=1, high=100),
    "replicate_syntheses": Param(
        "bool",
        "the sweep's, grid's and arm B's sets synthesised once per evaluation seed, seed s's "
        "students on seed s's sets, so the intervals cover the synthesis; false: all on seed 0's",
    ),
    "dwa_r_var": Param(
        "float",
        "DWA's variance weight r_var of the BN loss (lambda_var = 0.01 r_var; DWA: 11 on CIFAR and "
        "Tiny-ImageNet, 2 on ImageNet-1K)",
        low=0.0,
        high=1000.0,
    ),
    "classes_per_batch": Param(
        "int",
        "classes recovered per batch, each chunk with a fresh teacher copy (0: all in one; "
        "ImageNet-1K at 224 px: 100, as DWA's code)",
        low=0,
        high=100_000,
    ),
    "cross_ipc": Param("int", "ipc of the sets distilled by the other teachers (Tables 4 and 9)", low=1, high=1000),
    "cross_ipc_extra": Param(
        "list[int]",
        "further ipcs of the ResNet-18-distilled sets (Table 4's ipc-50 block; [] at cpu scale)",
        low=1,
        high=1000,
    ),
    "cross_teachers": Param(
        "list[str]",
        "the other distilling models (dd_teachers); [] leaves out Table 4's ResNet-18 block and Table 9",
        choices=("resnet18", "vit_bn"),
    ),
    "cl_ipc": Param("int", "Table 10: memory images per class (a prefix of dd_inversion's sets)", low=1, high=1000),
    "cl_tasks": Param("int", "Table 10: class-incremental tasks (must divide 10)", choices=(1, 2, 5, 10)),
    "tsne_ipc": Param("int", "ipc of dd_inversion's SRe2L/DWA sets (Fig. 1, the Table 10 memory)", low=1, high=1000),
    "tsne_real": Param("int", "real images under the t-SNE", low=50, high=60000),
    "sweep_ipc": Param("int", "ipc of the Fig. 3 / Fig. 4 sweep", low=2, high=1000),
    "sweep_lambdas": Param(
        "list[float]", "Fig. 3 lambda_var values (must include 0.01)", low=0.0, high=10.0, nonempty=True
    ),
    "fig4_seeds": Param(
        "list[int]",
        "synthesis seeds of Fig. 4's coupled and decoupled sets at λ_var 0.11 and of Fig. 1's "
        "SRe2L and DWA sets, at sweep_ipc (seed 0 is the sweep's set; 3 give their intervals)",
        low=0,
        high=SEED_MAX,
        nonempty=True,
    ),
    "grid_ipc": Param("int", "ipc of the Fig. 5 grid", low=1, high=1000),
    "grid_K": Param("list[int]", "Fig. 5 ascent steps", low=1, high=100, nonempty=True),
    "grid_rho": Param("list[float]", "Fig. 5 adjustment norms", low=0.0, high=10.0, nonempty=True),
    "eval_width": Param("int", "width of the Conv-3 student (BatchNorm)", low=4, high=1024),
    "temperature": Param("float", "temperature of the online teacher labels", low=0.01, high=100.0),
}


def check(values: dict) -> list[str]:
    """DWA (Du et al., NeurIPS 2024) Fig. 3 compares coupled with decoupled BN weights, which coincide at
    λ_var = 0.01; Fig. 5's grid needs positive adjustment norms (ρ = 0 is the separate no-adjustment arm);
    Table 10's memory is a prefix of dd_inversion's ipc-``tsne_ipc`` sets."""
    errs = dataset_problems(values)
    lams = values["sweep_lambdas"]
    if 0.01 not in lams or min(lams) <= 0:
        errs.append(f"sweep_lambdas: {lams} must be positive and include 0.01 (where coupled = decoupled)")
    if values["sweep_ipc"] < 2:
        errs.append(f"sweep_ipc: {values['sweep_ipc']} < 2; the feature distance needs two images of a class")
    if min(values["grid_K"]) < 1 or min(values["grid_rho"]) <= 0:
        errs.append(
            f"grid_rho: grid_K must be >= 1 and grid_rho > 0, got {values['grid_K']}, {values['grid_rho']}; "
            "rho = 0 is evaluated anyway"
        )
    if values["cl_ipc"] > values["tsne_ipc"]:
        errs.append(
            f"cl_ipc: {values['cl_ipc']} > tsne_ipc = {values['tsne_ipc']}, the ipc of dd_inversion's sets used as "
            "memory; lower cl_ipc"
        )
    return errs
