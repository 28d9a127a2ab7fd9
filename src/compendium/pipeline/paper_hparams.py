"""The papers' own training and synthesis hyper-parameters, as printed, beside what ``scale: paper`` runs.

:data:`PAPER_HPARAMS` maps a stage to the ``params.yaml`` keys whose values a paper states: each a
:class:`Setting`, the paper's value in the units and format ``params.yaml`` uses, with a short citation
(paper, then section, table, figure or appendix; "code" where only the authors' released code states it,
"ambiguous: ..." where the paper leaves it open and the entry records the value the stage uses). Keys the
papers do not state are not listed: a stage's other keys are our own choices.

:data:`GAPS` names the keys where the ``paper`` profile differs from the paper, on purpose or for now, and
why. A reason that begins with "open:" has no reason recorded in the project yet. ``GAPS`` may also name a
key the stage does not have (the ``dd_*`` stages without a ``dataset`` key stay on Fashion-MNIST at every
scale) or a key whose paper setting has no value in the key's units (a ResNet-18
where the key is a ConvNet width); those rows have no paper value.

:func:`compare` resolves every stage at ``scale: paper`` and returns one row per (stage, key);
:func:`coverage_markdown` condenses it to one table row per stage. The pipeline never imports this module:
the test of the paper profile does (it fails when ``params.yaml`` drifts from a recorded value).

Papers cited: DC (Zhao, Mopuri & Bilen, ICLR 2021), DSA (Zhao & Bilen, ICML 2021), DM (Zhao & Bilen,
WACV 2023), KIP (Nguyen, Chen & Lee, ICLR 2021), DD (Wang et al., 2018), SLDD and TDD (Sucholutsky &
Schonlau, 2021), LD (Bohdal et al., 2020), GTN (Such et al., ICML 2020), Mnemonics (Liu et al., CVPR
2020), SRe2L (Yin, Xing & Shen, NeurIPS 2023), DWA (Du et al., NeurIPS 2024), RDED (Sun et al., CVPR 2024),
ReLA (Sun, Jiang & Lin, NeurIPS 2024; "camera-ready" and "v1" are its two versions), KRR-ST (Lee et al.,
ICLR 2024), SSDD (Yu, Yao & Chiu, ICLR 2025), Barlow Twins (Zbontar et al., ICML 2021).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from compendium.distill.methods import papers
from compendium.pipeline.params import SCALE_KEY, resolve

PAPER_SCALE = "paper"


@dataclass(frozen=True)
class Setting:
    """One hyper-parameter as a paper prints it: ``value`` in ``params.yaml``'s units and format, and
    ``source``, the citation (paper, then section / table / figure / appendix, or its code)."""

    value: Any
    source: str


# --- the labelled-distillation papers ---------------------------------------------------------------------

_DC_CODE = "DC (Zhao, Mopuri & Bilen, ICLR 2021) / DSA (Zhao & Bilen, ICML 2021) code"
_DWA_T6 = "DWA (Du et al., NeurIPS 2024) Table 6 (CIFAR)"
_DWA_EVAL_STEPS = (
    "ambiguous: DWA Table 6 trains 400 epochs at batch 128, i.e. 400 steps at ipc 10 and 1,600 at "
    "ipc 50 on 10 classes; the stage trains a fixed 2,000 steps at every ipc"
)
_DWA_STEM = "DWA code (MoCo's CIFAR ResNet-18): 3x3 stride-1 stem, no max-pool"

_DC_STUDENT_LR = Setting(
    0.01, f"{_DC_CODE}: students train with SGD, lr_net 0.01, 300 epochs (1,000 with DSA augmentation)"
)


def _own(method: str, key: str) -> Setting:
    """A labelled distillation method's own setting, as its paper states it (kept once, in
    :mod:`compendium.distill.methods.papers`)."""
    found = papers.PAPERS[method].settings[key]
    return Setting(found.value, found.source)


_DC_FAMILY = {
    "width": Setting(128, f"{_DC_CODE}: ConvNet of 3 blocks with 128 channels"),
    "iterations": _own("dc", "iterations"),
    "batch_real": _own("dc", "batch_real"),
    "eval_lr": _DC_STUDENT_LR,
}
_DWA_RECOVERY = {
    **{key: _own("dwa", key) for key in ("iterations", "lr", "jitter", "rho", "K")},
}
_DWA_VALIDATION = {
    "eval_lr": Setting(0.001, f"{_DWA_T6}: AdamW lr 0.001, weight decay 0.01, cosine"),
    "eval_batch": Setting(128, f"{_DWA_T6}: batch 128"),
    "eval_steps": Setting(2000, _DWA_EVAL_STEPS),
    "temperature": Setting(30.0, f"{_DWA_T6}: temperature 30"),
}

PAPER_HPARAMS: dict[str, dict[str, Setting]] = {
    "dd_matching": {
        "ipcs": Setting([1, 10, 50], "DC and DSA: 1, 10 and 50 images per class"),
        **_DC_FAMILY,
        "dm_iterations": _own("dm", "iterations"),
        "loops_ipc10": _own("dc", "loops_ipc10"),
        "loops_ipc50": _own("dc", "loops_ipc50"),
        "dsa_eval": Setting(True, "DSA and DM code: their sets are evaluated with DSA augmentation (1,000 epochs)"),
        "eval_width": Setting(128, f"{_DC_CODE}: ConvNet-128 students"),
        "dataset": Setting(
            "cifar10",
            "DC Table 1, DSA Table 2, DM Table 1: CIFAR-10 (the code's Table 1 command; the "
            "papers also report MNIST, Fashion-MNIST and SVHN)",
        ),
    },
    "dd_dc_arch": {
        **_DC_FAMILY,
        "ipc": Setting(
            1,
            "DC code (Zhao, Mopuri & Bilen, ICLR 2021): the ablation commands of its Tables T2-T7 "
            "condense 1 image per class",
        ),
        "loops": Setting([1, 1], f"{_DC_CODE}: (outer_loop, inner_loop) = (1, 1) at ipc 1"),
        "dataset": Setting("mnist", "DC code: the ablation commands of its Tables T2-T7 run on MNIST"),
    },
    "dd_kip": {
        "kernels": Setting(
            ["fc", "rbf"], "KIP (Nguyen, Chen & Lee, ICLR 2021) single-kernel study: FC and RBF kernels"
        ),
        "depth": Setting(
            1,
            "KIP single-kernel study: the FC1 kernel (one hidden layer); its kernel-to-kernel study "
            "draws FC / CNN kernels of depth 1-3",
        ),
        "dataset": Setting(
            "cifar10", "KIP Sec. 3: MNIST and CIFAR-10 (LS also Fashion-MNIST); the profile runs CIFAR-10"
        ),
    },
    "dd_inversion": {
        "ipcs": Setting([1, 10, 50], "ReLA camera-ready Table 5 (v1 Table 6): IPC 1, 10, 50 (DWA Table 1: 10, 50)"),
        **_DWA_RECOVERY,
        "ladder_ipc": Setting(10, "DWA Table 3: the ablation at ipc 10 (its ipc-50 block is not run)"),
        "rded_factor": _own("rded", "factor"),
        "rded_images_per_class": _own("rded", "images_per_class"),
        "students": Setting(["convnet", "resnet18"], "DWA Table 1: ConvNet-128 and ResNet-18 settings"),
        "dataset": Setting(
            "cifar100",
            "DWA Tables 1, 3 and 11: CIFAR-100 (Table 1 also CIFAR-10; Table 2 Tiny-ImageNet and ImageNet-1K)",
        ),
        "eval_width": Setting(128, "DWA Table 1: ConvNet-128"),
        "eval_resnet_width_mult": Setting(1.0, "DWA Table 1: the standard ResNet-18"),
        "eval_resnet_stem_stride": Setting(1, _DWA_STEM),
        **_DWA_VALIDATION,
        "gvbsm_backbones": Setting(
            ["resnet18", "convnet", "mobilenet_v2", "wrn_16_2", "shufflenet_v2"],
            "G-VBSM's CIFAR recovery code: ResNet18, ConvNetW128, MobileNetV2, WRN_16_2, ShuffleNetV2_0_5",
        ),
        "gvbsm_iterations": _own("gvbsm", "iterations"),
        "gvbsm_lr": _own("gvbsm", "lr"),
    },
    "dd_dwa": {
        **_DWA_RECOVERY,
        "sweep_seeds": Setting([0, 1, 2, 3, 4], "DWA Fig. 3: 5 runs per point"),
        "sweep_lambdas": Setting(
            [0.01, 0.03, 0.05, 0.07, 0.09, 0.11, 0.13, 0.15, 0.17, 0.19, 0.21, 0.23],
            "ambiguous: DWA Fig. 3 sweeps lambda_var over 0.01-0.23 without listing the "
            "points; the stage steps by 0.02",
        ),
        "grid_K": Setting([1, 4, 8, 12, 16], "ambiguous: DWA Fig. 5 does not list its K values (default 12)"),
        "grid_rho": Setting(
            [0.005, 0.01, 0.015, 0.02, 0.03], "ambiguous: DWA Fig. 5 does not list its rho values (default 15e-3)"
        ),
        "cross_ipc": Setting(10, "DWA Table 4: the ipc-10 block"),
        "cross_ipc_extra": Setting([50], "DWA Table 4: the ipc-50 block"),
        "cross_teachers": Setting(
            ["resnet18", "vit_bn"],
            "DWA Tables 4 and 9: sets distilled by ResNet-18 and by DeiT-Tiny-BN (SRe2L's ViT-BN)",
        ),
        "cl_ipc": Setting(20, "DWA Table 10 (App. A.2.4): GDumb memory of 20 images per class"),
        "cl_tasks": Setting(5, "DWA Table 10: 5 class-incremental tasks"),
        "tsne_ipc": Setting(50, "DWA Fig. 1: ipc 50"),
        "dataset": Setting("cifar100", "DWA Figs. 1, 3-5, Tables 4 and 10: CIFAR-100"),
        "eval_width": Setting(128, "DWA Table 1: ConvNet-128"),
        **_DWA_VALIDATION,
    },
    "dd_teachers": {
        "teachers": Setting(
            ["convnet", "resnet18", "vit_bn", "mobilenet_v2", "shufflenet_v2"],
            "DWA: ResNet-18 (default), ConvNet-128 (Table 1) and DeiT-Tiny-BN (Table 9) teachers; "
            "G-VBSM's CIFAR code adds MobileNetV2 and ShuffleNetV2 0.5x to its backbones",
        ),
        "mobilenet_width_mult": Setting(1.0, "G-VBSM's CIFAR code: MobileNetV2"),
        "shufflenet_width_mult": Setting(0.5, "G-VBSM's CIFAR code: ShuffleNetV2_0_5"),
        "convnet_width": Setting(128, "DWA Table 1: ConvNet-128"),
        "resnet_width_mult": Setting(1.0, "DWA Sec. 4: the standard ResNet-18"),
        "resnet_stem_stride": Setting(1, _DWA_STEM),
        "train_n": Setting(50000, "SRe2L / DWA squeeze: the teacher trains on the whole training set (CIFAR: 50,000)"),
        "dataset": Setting(
            "cifar100", "DWA Tables 1, 3, 4: CIFAR-100 squeezes (the teachers of dd_inversion and dd_dwa)"
        ),
        "epochs": Setting(200, "DWA code, CIFAR squeeze: 200 epochs"),
        "batch_size": Setting(128, "DWA code, CIFAR squeeze: batch 128"),
        "lr": Setting(0.1, "DWA code, CIFAR squeeze: SGD lr 0.1, momentum 0.9, cosine"),
        "weight_decay": Setting(0.0005, "DWA code, CIFAR squeeze: weight decay 5e-4"),
    },
    "dd_crossarch": {
        "table4_ipcs": Setting([10, 50], "DWA Table 4: ipc 10 and 50 blocks"),
        "table4_archs": Setting(
            ["mobilenet_v2", "shufflenet_v2", "efficientnet_b0", "vgg16", "resnet50", "convnet"],
            "DWA Table 4 columns: MobileNetV2, ShuffleNet, EfficientNet, VGG-16, ResNet-50, ConvNet-128",
        ),
        "table9_archs": Setting(
            ["vit_tiny", "resnet18", "resnet50", "resnet101"],
            "DWA Table 9 (App. A.2.3) columns: DeiT-Tiny, ResNet-18, ResNet-50, ResNet-101",
        ),
        "cross_teachers": Setting(
            ["resnet18", "vit_bn"], "DWA Tables 4 and 9: sets distilled by ResNet-18 and by DeiT-Tiny-BN"
        ),
        "zoo_width": Setting(128, "DWA Table 4: ConvNet-128"),
        "zoo_width_mult": Setting(1.0, "DWA Table 4: the standard MobileNetV2, ShuffleNetV2, EfficientNet-B0"),
        "zoo_depth_mult": Setting(1.0, "DWA Table 4: the standard MobileNetV2, ShuffleNetV2, EfficientNet-B0"),
        "zoo_stem_stride": Setting(1, _DWA_STEM),
        **_DWA_VALIDATION,
    },
    # --- the reading notes' remaining methods -----------------------------------------------------------------
    "dd_unrolled": {
        "arch": Setting("lenet", "SLDD (Sucholutsky & Schonlau, 2021): LeNet on MNIST"),
        "init": Setting("xavier", "SLDD: the random initialisation is Xavier's"),
        "steps": Setting(10, "DD (Wang et al., 2018): 10 GD steps"),
        "epochs": Setting(3, "DD: 3 epochs over the steps (learned rates not tied across epochs)"),
        "dataset": Setting("mnist", "DD Sec. 4 and SLDD: MNIST (DD also CIFAR-10)"),
    },
    "dd_labels": {
        "arch": Setting("lenet", "LD (Bohdal et al., 2020): LeNet for MNIST and similar datasets"),
        "inner_steps": Setting(1, "LD second-order variant: one inner model update per label step"),
        "dataset": Setting(
            "mnist",
            "LD Sec. 4: MNIST within-dataset and EMNIST -> MNIST cross-dataset (the digits stand in for EMNIST)",
        ),
    },
    "dd_gtn": {
        "curricula": Setting(
            ["full", "shuffled_batch", "shuffled", "noise"],
            "GTN (Such et al., ICML 2020) curriculum study: full curriculum, shuffled batch, all shuffled, noise",
        ),
        "dataset": Setting(
            "cifar10",
            "GTN Sec. 3.3 and DSA's NAS study: the architecture search on CIFAR-10 (GTN's "
            "few-step learning also MNIST)",
        ),
    },
    "dd_nas": {
        "dataset": Setting(
            "cifar10", "GTN Sec. 3.3 and DSA's NAS study: the ground truth trains each architecture on CIFAR-10"
        ),
    },
    "dd_mnemonics": {
        "dataset": Setting(
            "cifar100", "Mnemonics (Liu et al., CVPR 2020) Sec. 5: CIFAR-100 under the LUCIR protocol (and ImageNet)"
        ),
        "base_classes": Setting(50, "Mnemonics Sec. 5 (LUCIR): half of CIFAR-100's classes in phase 0"),
        "increment": Setting(2, "Mnemonics Sec. 5: N = 25 phases of 2 classes (the most of its 5, 10, 25)"),
        "phase_increments": Setting([5, 10], "Mnemonics Sec. 5: N = 10 and 5 phases (5 and 10 classes each)"),
        "train_per_class": Setting(500, "CIFAR-100: every training image (500 per class)"),
    },
    "dd_text": {
        "inits": Setting(["fixed", "random"], "TDD (Sucholutsky & Schonlau, 2021): fixed and random initialisation"),
        "archs": Setting(["textconvnet", "birnn", "bilstm"], "TDD: TextConvNet, Bi-RNN and Bi-LSTM learners"),
        "corpus": Setting("trec6", "TDD §4.3: IMDB, SST-5, TREC-6 and TREC-50 (each a `corpus` choice here)"),
    },
    # --- self-supervised dataset distillation ---------------------------------------------------------------
    "ssdd_teacher": {
        "dataset": Setting("cifar100", "SSDD (Yu, Yao & Chiu, ICLR 2025) Sec. 4, Tables 1-4: CIFAR-100 as the source"),
        "arch": Setting("resnet18", "SSDD App. A.1: a ResNet-18 teacher g_phi trained with Barlow Twins (solo-learn)"),
        "width": Setting(64, "SSDD App. A.1: the standard ResNet-18 (widths 64-512, a 512-d representation)"),
        "train_n": Setting(
            50000, "SSDD Sec. 3.1: the teacher is trained on the whole source set (CIFAR-100's 50,000 training images)"
        ),
        "lambd": Setting(
            0.005,
            "Barlow Twins (Zbontar et al., ICML 2021): off-diagonal weight 5e-3 (SSDD App. A.1: "
            "a Barlow Twins teacher)",
        ),
        "pool_n": Setting(50000, "SSDD Algorithm 1: real batches are drawn from the whole source set (CIFAR-100)"),
    },
    "ssdd_distill": {
        "dataset": Setting("cifar100", "SSDD Sec. 4, Tables 1-4: CIFAR-100 as the source"),
        "budget_n": Setting(100, "SSDD Sec. 4 / Table 1: N = 100 images (IPC 1 on CIFAR-100)"),
        "matching_ipc": Setting(1, "SSDD App. A.1: supervised DD baselines at IPC = N / #classes"),
        "basis_mult": Setting(2, "SSDD Table 5: U = V = 2N"),
        "s": Setting(2, "SSDD App. A.1: s = 2 for CIFAR-100 (32 -> 16 px)"),
        "augmentation": Setting("rotation", "SSDD App. A.1: rotations by 90, 180, 270 degrees"),
        "hidden": Setting(4, "SSDD App. A.1: approximation networks of hidden width 4 (CIFAR-100)"),
        "approx_variants": Setting(
            ["same", "bias", "q2", "q8", "ideal"], "SSDD Table 11: Same, Bias, Ours_2, Ours_8, Ideal beside Ours_4"
        ),
        "ablation_augmentations": Setting(
            ["jigsaw", "crop"],
            "SSDD Table 12: jigsaw and crop beside rotation (its 'no augmentation' is Table 3's '+ Parameterization')",
        ),
        "ablation_inits": Setting(["real", "random"], "SSDD Table 4: real-image and random bases beside PCA"),
        "steps": Setting(30000, "SSDD App. A.1: 30,000 outer iterations (CIFAR-100)"),
        "lr": Setting(0.001, "SSDD App. A.1: AdamW lr 0.001, linearly decayed"),
        "krrst_lr": Setting(
            0.0001,
            "ambiguous: SSDD does not state the KRR-ST baseline's outer lr; KRR-ST (Lee et "
            "al., ICLR 2024) README: 1e-4 for CIFAR-100",
        ),
        "real_batch": Setting(1024, "KRR-ST code: 1,024 real images per outer step (SSDD does not state it)"),
        "lam_rel": Setting(0.000001, "KRR-ST code: ridge 1e-6 x tr(K) (SSDD does not state it)"),
        "pool_size": Setting(10, "SSDD App. A.1: model pool of L = 10"),
        "pool_steps": Setting(1000, "SSDD App. A.1: Z = 1,000 steps before a pool model is reset"),
        "budgets": Setting(
            [25, 50, 100, 1000, 5000], "SSDD Table 2 / Table 5: N = 25, 50, 100, 1000, 5000 on CIFAR-100"
        ),
    },
    "ssdd_eval": {
        "dataset": Setting("cifar100", "SSDD Sec. 4, Tables 1-4: CIFAR-100 as the source (and Table 2's target)"),
        "seeds": Setting([0, 1, 2], "SSDD App. A.1 / Table 1: mean and std over 3 runs"),
        "ablation_seeds": Setting([0, 1, 2], "SSDD App. A.1: 3 runs"),
        "cross_seeds": Setting([0, 1, 2], "SSDD Table 1: 3 runs per student"),
        "archs": Setting(
            ["convnet", "vgg11", "resnet18", "alexnet", "mobilenet_v2", "vit_tiny"],
            "SSDD Table 1: ConvNet, VGG11, ResNet18, AlexNet, MobileNet, ViT",
        ),
        "cross_methods": Setting(
            ["Random", "KMeans", "DSA", "DM", "IDM", "DATM", "KRR-ST", "SSDD"],
            "SSDD Table 1: Random, KMeans, DSA, DM, IDM, DATM, KRR-ST, Ours",
        ),
        "budget_n": Setting(100, "SSDD Table 1: N = 100 (IPC 1 on CIFAR-100)"),
        "budgets": Setting([25, 50, 100, 1000, 5000], "SSDD Table 2: N = 25, 50, 100, 1000, 5000"),
        "pre_epochs": Setting(1000, "SSDD App. A.1: 1,000 pre-training epochs"),
        "pre_lr": Setting(0.1, "SSDD App. A.1: SGD lr 0.1, momentum 0.9, batch 256"),
        "pre_wd": Setting(0.001, "SSDD Table 5: weight decay 1e-3 at N <= 100 (CIFAR-100)"),
        "probe_lr": Setting(0.2, "SSDD App. A.1: linear probe with SGD lr 0.2, momentum 0.9, no weight decay, cosine"),
        "probe_train_n": Setting(
            50000, "KRR-ST code's linear evaluation (SSDD follows KRR-ST): the whole training split (CIFAR-100)"
        ),
        "probe_test_n": Setting(10000, "KRR-ST code's linear evaluation: top-1 on the whole test split"),
        "zoo_width_mult": Setting(1.0, "SSDD Table 1: the standard VGG11, ResNet18, AlexNet, MobileNet"),
    },
    # --- ReLA -------------------------------------------------------------------------------------------------
    "priors": {
        "dataset": Setting("cifar10", "ReLA camera-ready Table 1: the CIFAR-10 rows; CF10-T is BYOL on CIFAR-10"),
        "cross_dataset": Setting("cifar100", "ReLA camera-ready Table 1: the CF100-T prior (BYOL on CIFAR-100)"),
        "train_n": Setting(50000, "ReLA camera-ready Table 1: CF10-T trains on the whole CIFAR-10 training split"),
        "byol_epochs": Setting(100, "ReLA camera-ready Table 8: 100 epochs (CF10-T is a full-budget BYOL run)"),
        "cross_byol_epochs": Setting(100, "ReLA camera-ready Table 8: 100 epochs (CF100-T, full budget)"),
        "byol_batch_size": Setting(128, "ReLA camera-ready Table 8: batch 128 (CIFAR)"),
        "order": Setting(
            "code",
            "ambiguous: camera-ready eq. 10 z-scores before the PCA, the ReLA code after it; "
            "the stage follows the code",
        ),
    },
    "rela_budget": {
        "dataset": Setting("cifar10", "ReLA camera-ready Table 1: the CIFAR-10 rows"),
        "epochs": Setting(100, "ReLA camera-ready Table 8: 100 epochs"),
        "batch_size": Setting(128, "ReLA camera-ready Table 8: batch 128 (CIFAR)"),
        "lr": Setting(0.001, "ReLA camera-ready Table 8: AdamW lr 0.001 (code: constant)"),
        "weight_decay": Setting(0.01, "ReLA camera-ready Table 8: weight decay 0.01"),
        "head_mult": Setting(1.0, "ReLA code: BYOL heads d -> 2d -> 256"),
        "budgets": Setting([0.1, 0.2, 0.5], "ReLA camera-ready Table 1: budgets 10, 20, 50%"),
        "schedule": Setting("switch", "ReLA camera-ready Algorithm 1: the two-stage switch"),
        "same_dataset_prior": Setting("trained:priors/cifar10_byol.pt", "ReLA camera-ready Table 1: CF10-T"),
        "cross_dataset_prior": Setting("trained:priors/cifar100_byol.pt", "ReLA camera-ready Table 1: CF100-T"),
        "cost_goal": Setting(0.5, "ReLA camera-ready abstract: the same accuracy as BYOL* at 50% of its cost"),
        "rela_code_extras": Setting(
            True,
            "ambiguous: the papers' weak views are crop + flip, the code adds colour "
            "jitter and grayscale; the stage follows the code",
        ),
        "probe_train": Setting(0, "ReLA code: the probe trains on the whole training split"),
        "probe_standardize": Setting(False, "ReLA code: the probe's features are not normalised"),
        "probe_epochs": Setting(100, "ReLA code: 100 probe epochs"),
        "probe_batch_size": Setting(128, "ReLA camera-ready Table 9: probe batch 128 (CIFAR)"),
        "probe_lr": Setting(0.0003, "ReLA camera-ready Table 9: Adam lr 3e-4"),
    },
}

_OPEN = "open: "  # a gap with no reason recorded in the project yet
_SHARED_STUDENT = (
    "one student protocol for every dd_* method (AdamW, cosine, a fixed number of steps); the paper's "
    "students train with SGD, so its rate is not comparable"
)
_SHARED_TEMPERATURE = (
    "one student protocol for every teacher-label method: T = 4 at every scale; DWA's CIFAR "
    "validator uses 30 (ImageNet-1K 20)"
)
_RESNET_STUDENT = (
    "ReLA's students and BYOL priors are ResNet-18s (CIFAR stem); here the Conv-3 stays the Table 1 "
    "student at every scale"
)
_KRRST_CONVNET = (
    "{}: KRR-ST's ConvNet-3 widens 128-256-512 and flattens its 4x4x512 map; the stage's ConvNet-3 has one width"
)
_SSDD_BUDGETS = (
    _OPEN + "SSDD Table 2 runs N = 25, 50, 100, 1000, 5000 on CIFAR-100; the paper profile runs N = 25, "
    "50, 100 (at N = 1000 and 5000 Table 5's U = 500 / 700 are not twice N, the rule of basis_mult)"
)

GAPS: dict[str, dict[str, str]] = {
    "dd_matching": {
        "eval_lr": _SHARED_STUDENT,
    },
    "dd_dc_arch": {
        "eval_lr": _SHARED_STUDENT,
    },
    "dd_kip": {
        "depth": _OPEN + "the fc kernel stays at 3 hidden layers at paper scale; KIP's single-kernel results are FC1",
    },
    "dd_inversion": {
        "temperature": _SHARED_TEMPERATURE,
        "gvbsm_backbones": "WRN-16-2, the fifth backbone of G-VBSM's CIFAR code, is not in the compendium's zoo; the "
        "other "
        "four are dd_teachers' teachers",
        "methods": "G-VBSM (Shao et al., CVPR 2024; ReLA Table 5's fourth column, which ReLA cites without describing) "
        "follows its CIFAR code's recovery (compendium.distill.gvbsm) against dd_teachers' ResNet-18, ConvNet, "
        "MobileNet-V2 and ShuffleNet-V2 0.5x: its WRN-16-2 is not in the zoo, and its ensemble relabelling is "
        "replaced by the shared post-training ReLA Table 5 prescribes. The cpu profile leaves it out (the "
        "table's arms sit at the student's ceiling there); dd_tables has no G-VBSM row yet",
    },
    "dd_dwa": {
        "temperature": _SHARED_TEMPERATURE,
    },
    "dd_teachers": {
        "epochs": _OPEN + "50 epochs at paper scale (the faithful profile trains 200)",
        "lr": _OPEN + "the stage trains its teachers with AdamW (cosine); DWA's code with SGD, so the rates are not "
        "comparable",
        "weight_decay": _OPEN + "AdamW's decoupled weight decay 0.01 against DWA's SGD weight decay 5e-4",
    },
    "dd_crossarch": {
        "temperature": _SHARED_TEMPERATURE,
        "dataset": "no `dataset` key: each set is evaluated on the dataset it was made from (at paper scale the DC / "
        "DSA / DM matrix on CIFAR-10, DC's Table 2 on MNIST, DWA's Tables 4 and 9 on CIFAR-100), read from "
        "`data_root`; DWA's Table 9 is ImageNet-1K's, whose teachers and sets the stages do not make",
    },
    "dd_mnemonics": {
        "width": "Mnemonics trains a 32-layer ResNet on CIFAR-100 (ResNet-18 on ImageNet); the stage's learner is a "
        "ConvNet with instance norm (the unrolled network keeps no running statistics)",
        "methods": "DC / DSA / DM memories are dd_matching's sets, made from CIFAR-10 at paper scale, so the CIFAR-100 "
        "profile leaves them out (DWA's come from dd_inversion's CIFAR-100 sets); the DC and DSA continual "
        "rows are tested at cpu scale",
        "memory": "LUCIR keeps 20 exemplars per class; the stage keeps 10, the ipc of the distilled memories it "
        "compares",
        "class_order": "the natural class order; LUCIR shuffles CIFAR-100's classes with seed 1993",
    },
    "dd_text": {
        "archs": _OPEN + "no Bi-RNN learner is implemented (TextConvNet and Bi-LSTM are)",
        "embeddings": "MiniLM's WordPiece token embeddings at every scale, where TDD uses GloVe word vectors (no GloVe "
        "file is shipped or read)",
    },
    "ssdd_distill": {
        "budgets": _SSDD_BUDGETS,
        "inner_width": _OPEN + _KRRST_CONVNET.format("the inner model"),
    },
    "ssdd_eval": {
        "cross_methods": "IDM and DATM are not implemented; DSA and DM come from dd_matching, which distils "
        "CIFAR-10 at paper scale, so the CIFAR-100 paper profile leaves them out",
        "probe_lr": "the stage's probe trains Adam on z-scored features at every scale",
        "budgets": _SSDD_BUDGETS,
        "student_width": _KRRST_CONVNET.format("the student") + ", globally pooled at every scale (chosen at "
        "cpu scale so that pre-training shows in the probe)",
    },
    "priors": {"width": _RESNET_STUDENT},
    "rela_budget": {
        "width": _RESNET_STUDENT,
        "priors": "Table 1's priors are Rand., CF10-T, CF100-T, TIN-T, IN1K-T and CLIP-RN50; the stage has Rand., "
        "CF10-T, CF100-T and a supervised CIFAR-10 network as the strong prior (CLIP loads only from "
        "local files)",
    },
}


def same(ours: Any, paper: Any) -> bool:
    """Whether a resolved value equals the paper's: numbers to float precision (``15e-3 == 0.015``),
    lists item by item, anything else by ``==``; a bool equals only a bool."""
    if isinstance(ours, list) and isinstance(paper, list):
        return len(ours) == len(paper) and all(same(a, b) for a, b in zip(ours, paper))
    if isinstance(ours, bool) or isinstance(paper, bool):
        return type(ours) is type(paper) and ours == paper
    if isinstance(ours, (int, float)) and isinstance(paper, (int, float)):
        return math.isclose(ours, paper, rel_tol=1e-9, abs_tol=0.0)
    return ours == paper


def status(ours: Any, setting: Setting | None, gap: str | None = None) -> str:
    """ "matches", "differs (gap: <reason>)" or "differs" for one key.

    >>> status(0.25, Setting(0.25, "DWA Table 6"))
    'matches'
    >>> status(4.0, Setting(30.0, "DWA Table 6"), gap="one student protocol")
    'differs (gap: one student protocol)'
    >>> status(999, Setting(1000, "DWA Table 6"))
    'differs'
    """
    if setting is not None and same(ours, setting.value):
        return "matches"
    return f"differs (gap: {gap})" if gap else "differs"


def compare(params: dict) -> pd.DataFrame:
    """One row per recorded (stage, key): the value ``params`` resolves at ``scale: paper`` (``ours``; None
    where the stage lacks the key), the paper's (None for a gap without one), its source and the status.

    >>> params = {"scale": "cpu",
    ...           "dd_dwa": {"iterations": 300, "lr": 0.25, "scales": {"paper": {"iterations": 1000}}}}
    >>> rows = compare(params).set_index(["stage", "key"])
    >>> rows.loc[("dd_dwa", "iterations"), ["ours", "paper", "status"]].tolist()
    [1000, 1000, 'matches']
    >>> rows.loc[("dd_dwa", "temperature"), ["ours", "paper"]].tolist()   # the section leaves it out: a gap
    [None, 30.0]
    >>> rows.loc[("dd_dwa", "temperature"), "status"].startswith("differs (gap: one student protocol")
    True
    """
    at_paper = {**params, SCALE_KEY: PAPER_SCALE}
    rows = []
    for stage, settings in PAPER_HPARAMS.items():
        values = resolve(at_paper, stage) if isinstance(params.get(stage), dict) else {}
        gaps = GAPS.get(stage, {})
        for key in [*settings, *(k for k in gaps if k not in settings)]:
            setting = settings.get(key)
            ours = values.get(key)
            rows.append(
                {
                    "stage": stage,
                    "key": key,
                    "ours": ours,
                    "paper": None if setting is None else setting.value,
                    "source": "" if setting is None else setting.source,
                    "status": status(ours, setting, gaps.get(key)),
                }
            )
    columns = ["stage", "key", "ours", "paper", "source", "status"]
    # object columns keep every value as params.yaml has it (an int stays an int, a missing key None)
    return pd.DataFrame({c: pd.Series([row[c] for row in rows], dtype=object) for c in columns})


def coverage_markdown(params: dict) -> str:
    """A markdown table, one row per stage: the recorded keys (gap rows included) that match the paper, and
    the keys that differ: the gaps ("(open)" where no reason is recorded yet), then plain differences."""
    table = compare(params)
    lines = ["| stage | matches / recorded | gaps | differs |", "|---|---|---|---|"]
    for stage, rows in table.groupby("stage", sort=False):
        matched = int((rows["status"] == "matches").sum())
        gap_keys = [
            key + (" (open)" if GAPS[stage][key].startswith(_OPEN) else "")
            for key in rows.loc[rows["status"].str.startswith("differs (gap"), "key"]
        ]
        plain = rows.loc[rows["status"] == "differs", "key"].tolist()
        lines.append(
            f"| `{stage}` | {matched} / {len(rows)} | {', '.join(gap_keys) or '—'} | {', '.join(plain) or '—'} |"
        )
    return "\n".join(lines)
