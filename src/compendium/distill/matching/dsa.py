"""Differentiable Siamese Augmentation (DSA; Zhao & Bilen, ICML 2021, Sec. 3.2-3.3).

DSA matches gradients (or embeddings, DM) of a real batch and a synthetic batch that went through
*the same* randomly drawn, differentiable transformation A_omega (Sec. 3.2, eq. 5: omega shared by
both sides, "Siamese"). Six families, with the defaults of the authors' code (``ParamDiffAug``):

==========  ===============================================================  ==============
family      transformation (images in the dataset's normalised space)         parameters
==========  ===============================================================  ==============
color       brightness ``x + (u - 1/2) b``; saturation ``(x - mean_c) u s +    b=1, s=2, c=0.5
            mean_c``; contrast ``(x - mean_chw)(u + c) + mean_chw``
crop        integer translation by up to ``round(0.125 H)`` px, zero filled    0.125
cutout      one ``round(0.5 H) x round(0.5 W)`` square set to 0                0.5
flip        horizontal flip with probability 1/2                               0.5
scale       ``affine_grid`` with diag(sx, sy), sx, sy ~ U(1/1.2, 1.2)         1.2
rotate      ``affine_grid`` rotation by U(-15, 15) degrees                     15
==========  ===============================================================  ==============

Every map is affine in the pixels (linear except brightness), so gradients flow to ``x``
(``grid_sample``, ``gather`` and masks). ``mode="single"`` (the code's default ``aug_mode='S'``)
applies *one* family per call, drawn from the strategy; ``mode="multiple"`` applies all in order.

**Siamese semantics (what** :func:`augment` **does with a seed).** All randomness comes from a CPU
``torch.Generator`` seeded with ``seed``: first the family index (single mode), then *one* value per
random quantity (``n = 1``), which is broadcast over the whole batch. The draw never depends on the
batch size, dtype or device, so ``augment(real_256, s)`` and ``augment(syn_10, s)`` apply the
identical map, and ``augment(cat(a, b), s) == cat(augment(a, s), augment(b, s))``. The authors' code
draws per-sample values and then copies sample 0's draw onto the batch (``theta[:] = theta[0]``):
the same "one transformation per batch" semantics, but there the value depends on the global RNG.
:func:`augment_independent` is the non-Siamese form (per-sample values, one family per call), used
when a network is trained on augmented synthetic data (DSA's inner loop and its evaluation).

Flip is not used for digit datasets (the code's note: "not good for digit datasets"); Fashion-MNIST
and CIFAR use it (:func:`default_strategy`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F

from compendium.core import data

FAMILIES = ("color", "crop", "cutout", "flip", "scale", "rotate")
DEFAULT_STRATEGY = "color_crop_cutout_flip_scale_rotate"  # the DC/DSA/DM code's default
DIGIT_STRATEGY = "color_crop_cutout_scale_rotate"  # no flip for digits
_DIGITS = data.DIGIT_DATASETS


@dataclass(frozen=True)
class DSAParams:
    """Magnitudes of the six families (the code's ``ParamDiffAug`` defaults)."""

    flip_prob: float = 0.5
    scale: float = 1.2  # sx, sy ~ U(1/scale, scale)
    rotate: float = 15.0  # degrees, angle ~ U(-rotate, rotate)
    crop: float = 0.125  # max translation as a fraction of the side
    cutout: float = 0.5  # side of the erased square as a fraction of the side
    brightness: float = 1.0
    saturation: float = 2.0
    contrast: float = 0.5
    mode: str = "single"  # single: one family per call (aug_mode 'S'); multiple: all ('M')

    def __post_init__(self) -> None:
        if self.mode not in ("single", "multiple"):
            raise ValueError(f"DSA mode must be 'single' or 'multiple', got {self.mode!r}")
        if (
            self.scale < 1.0
            or self.rotate < 0
            or not 0 <= self.crop < 1
            or not 0 <= self.cutout <= 1
            or not 0 <= self.flip_prob <= 1
        ):
            raise ValueError(f"DSA magnitudes out of range: {self}")

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class Draw:
    """Sampled transformation parameters: ``families`` applied in order, each value ``[n]`` with
    n = 1 (Siamese, broadcast over the batch) or n = batch size (independent)."""

    families: tuple[str, ...]
    values: dict[str, torch.Tensor]
    n: int


def parse_strategy(strategy: str | None) -> tuple[str, ...]:
    """``'color_crop_...'`` -> ('color', 'crop', ...); ``None``, ``''`` and ``'none'`` -> ()."""
    if strategy is None or strategy.lower() in ("", "none"):
        return ()
    fams = tuple(strategy.split("_"))
    bad = [f for f in fams if f not in FAMILIES]
    if bad:
        raise ValueError(f"unknown DSA augmentation(s) {bad} in {strategy!r}; known: {list(FAMILIES)}")
    return fams


def default_strategy(dataset: str) -> str:
    """The code's default strategy; flip removed for digit datasets (Fashion-MNIST keeps it)."""
    name = dataset.lower().replace("_", "-")
    return DIGIT_STRATEGY if name in _DIGITS else DEFAULT_STRATEGY


def _uniform(n: int, lo: float, hi: float, g: torch.Generator) -> torch.Tensor:
    return lo + (hi - lo) * torch.rand(n, generator=g)


def _draw_family(fam: str, n: int, hw: tuple[int, int], p: DSAParams, g: torch.Generator) -> dict:
    h, w = hw
    if fam == "color":
        return {
            "brightness": torch.rand(n, generator=g),
            "saturation": torch.rand(n, generator=g),
            "contrast": torch.rand(n, generator=g),
        }
    if fam == "crop":
        sh, sw = int(h * p.crop + 0.5), int(w * p.crop + 0.5)
        return {
            "shift_y": torch.randint(-sh, sh + 1, (n,), generator=g),
            "shift_x": torch.randint(-sw, sw + 1, (n,), generator=g),
        }
    if fam == "cutout":
        ch, cw = int(h * p.cutout + 0.5), int(w * p.cutout + 0.5)
        # centre row/col as in the code: an even size may sit one past the last pixel
        return {
            "cut_y": torch.randint(0, h + (1 - ch % 2), (n,), generator=g),
            "cut_x": torch.randint(0, w + (1 - cw % 2), (n,), generator=g),
        }
    if fam == "flip":
        return {"flip": torch.rand(n, generator=g) < p.flip_prob}
    if fam == "scale":
        return {"sx": _uniform(n, 1 / p.scale, p.scale, g), "sy": _uniform(n, 1 / p.scale, p.scale, g)}
    if fam == "rotate":
        return {"angle": _uniform(n, -p.rotate, p.rotate, g) * (math.pi / 180)}
    raise ValueError(f"unknown DSA augmentation {fam!r}")


def sample(strategy: str, params: DSAParams, n: int, hw: tuple[int, int], generator: torch.Generator) -> Draw:
    """Draw the transformation parameters (single mode: one family, picked first)."""
    fams = parse_strategy(strategy)
    if fams and params.mode == "single":
        fams = (fams[int(torch.randint(len(fams), (1,), generator=generator))],)
    values: dict[str, torch.Tensor] = {}
    for f in fams:
        values.update(_draw_family(f, n, hw, params, generator))
    return Draw(fams, values, n)


def _col(v: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return v.to(device=x.device, dtype=x.dtype).view(-1, 1, 1, 1)


def _color(x: torch.Tensor, v: dict, p: DSAParams) -> torch.Tensor:
    x = x + (_col(v["brightness"], x) - 0.5) * p.brightness
    m = x.mean(dim=1, keepdim=True)
    x = (x - m) * (_col(v["saturation"], x) * p.saturation) + m
    m = x.mean(dim=(1, 2, 3), keepdim=True)
    return (x - m) * (_col(v["contrast"], x) + p.contrast) + m


def _expand_index(idx: torch.Tensor, b: int) -> torch.Tensor:
    return idx.expand(b, *idx.shape[1:]) if idx.shape[0] == 1 else idx


def _translate(x: torch.Tensor, dy: torch.Tensor, dx: torch.Tensor) -> torch.Tensor:
    """out[i, j] = x[i + dy, j + dx], zero outside the image (the code's pad-and-gather crop)."""
    b, c, h, w = x.shape
    rows = torch.arange(h, device=x.device).view(1, h) + dy.to(x.device).view(-1, 1)
    cols = torch.arange(w, device=x.device).view(1, w) + dx.to(x.device).view(-1, 1)
    ri = _expand_index(rows.clamp(0, h - 1).view(-1, 1, h, 1).expand(-1, c, h, w), b)
    ci = _expand_index(cols.clamp(0, w - 1).view(-1, 1, 1, w).expand(-1, c, h, w), b)
    out = x.gather(2, ri).gather(3, ci)
    valid = ((rows >= 0) & (rows < h)).view(-1, 1, h, 1) & ((cols >= 0) & (cols < w)).view(-1, 1, 1, w)
    return out * valid.to(x.dtype)


def _cutout(x: torch.Tensor, cy: torch.Tensor, cx: torch.Tensor, p: DSAParams) -> torch.Tensor:
    _, _, h, w = x.shape
    sh, sw = int(h * p.cutout + 0.5), int(w * p.cutout + 0.5)
    top = (cy.to(x.device) - sh // 2).view(-1, 1)
    left = (cx.to(x.device) - sw // 2).view(-1, 1)
    r = torch.arange(h, device=x.device).view(1, h)
    c = torch.arange(w, device=x.device).view(1, w)
    inside = ((r >= top) & (r < top + sh)).view(-1, 1, h, 1) & ((c >= left) & (c < left + sw)).view(-1, 1, 1, w)
    return x * (~inside).to(x.dtype)


def _affine(x: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
    """Bilinear resampling of x under ``theta`` [n, 2, 3] (output -> input coordinates), zeros outside."""
    b, c, h, w = x.shape
    theta = theta.to(device=x.device, dtype=x.dtype)
    grid = F.affine_grid(theta, [theta.shape[0], c, h, w], align_corners=False)
    if grid.shape[0] == 1 and b > 1:
        grid = grid.expand(b, -1, -1, -1)
    return F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False)


def apply(x: torch.Tensor, draw: Draw, params: DSAParams) -> torch.Tensor:
    """Apply a sampled :class:`Draw` to ``x`` [B, C, H, W] (differentiable in ``x``)."""
    if draw.n not in (1, x.shape[0]):
        raise ValueError(f"a draw of {draw.n} transformations cannot be applied to a batch of {x.shape[0]}")
    v = draw.values
    for f in draw.families:
        if f == "color":
            x = _color(x, v, params)
        elif f == "crop":
            x = _translate(x, v["shift_y"], v["shift_x"])
        elif f == "cutout":
            x = _cutout(x, v["cut_y"], v["cut_x"], params)
        elif f == "flip":
            x = torch.where(v["flip"].to(x.device).view(-1, 1, 1, 1), x.flip(3), x)
        elif f == "scale":
            z = torch.zeros_like(v["sx"])
            theta = torch.stack([torch.stack([v["sx"], z, z], 1), torch.stack([z, v["sy"], z], 1)], 1)
            x = _affine(x, theta)
        elif f == "rotate":
            a = v["angle"]
            cos, sin, z = torch.cos(a), torch.sin(a), torch.zeros_like(a)
            theta = torch.stack([torch.stack([cos, -sin, z], 1), torch.stack([sin, cos, z], 1)], 1)
            x = _affine(x, theta)
    return x.contiguous()


def _check(x: torch.Tensor) -> None:
    if not isinstance(x, torch.Tensor) or x.ndim != 4 or not x.is_floating_point():
        raise ValueError(
            f"DSA expects float images [B, C, H, W], got {getattr(x, 'dtype', type(x))} "
            f"{tuple(getattr(x, 'shape', ()))}"
        )


def augment(
    x: torch.Tensor, strategy: str = DEFAULT_STRATEGY, params: DSAParams | None = None, seed: int = 0
) -> torch.Tensor:
    """Siamese DSA (Sec. 3.2, eq. 5): one transformation drawn from ``seed`` and applied to every image
    of ``x``; the same seed applies the same map to any batch (see the module docstring)."""
    _check(x)
    fams = parse_strategy(strategy)
    if not fams:
        return x
    params = params or DSAParams()
    g = torch.Generator().manual_seed(int(seed))
    return apply(x, sample(strategy, params, 1, (x.shape[2], x.shape[3]), g), params)


def augment_independent(
    x: torch.Tensor,
    strategy: str = DEFAULT_STRATEGY,
    params: DSAParams | None = None,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Non-Siamese DSA: per-image parameters (one family per call in single mode), for training a network
    on augmented synthetic data. ``generator`` is a CPU generator (seeded by the caller)."""
    _check(x)
    fams = parse_strategy(strategy)
    if not fams:
        return x
    params = params or DSAParams()
    g = generator if generator is not None else torch.Generator().manual_seed(0)
    return apply(x, sample(strategy, params, x.shape[0], (x.shape[2], x.shape[3]), g), params)
