"""Batched augmentations on the training device: whole batches at once, no PIL, no per-sample loop.

Inputs are float images in [0, 1] of shape ``[B, C, H, W]``; randomness comes from an explicit
``torch.Generator`` on the same device, so runs are reproducible.

* :func:`random_resized_crop`: torchvision's RandomResizedCrop semantics (area fraction ~ U(scale),
  log aspect ratio ~ U(log ratio), up to 10 tries, then the whole image clamped to the ratio range),
  realised for the whole batch by one ``affine_grid`` + ``grid_sample``, with the horizontal flip
  folded into the same affine map.
* :func:`color_jitter`: brightness, contrast, saturation and hue for RGB. On 1-channel images only
  brightness and contrast act; saturation, hue and grayscale are no-ops.
* :func:`gaussian_blur`, :func:`solarize`, :func:`grayscale`.
* :class:`Pipeline` presets: ``rela_weak`` (RandomResizedCrop with min scale 0.5 plus flip; the
  official code's extra colour jitter p=0.8 and grayscale p=0.2 behind ``code_extras``), and each
  SSL method's strong two-view pipeline (BYOL's asymmetric blur and solarize, SimCLR, ...).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F


def _u(n, lo, hi, g, device):
    return lo + (hi - lo) * torch.rand(n, generator=g, device=device)


def crop_boxes(
    n: int, scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3), generator=None, device="cpu", tries: int = 10, aspect: float = 1.0
):
    """Per-sample crop width/height as fractions of the image and centre offsets in [-1, 1] units.

    ``aspect`` is the image's W/H. The fallback after ``tries`` is the whole image, clamped to the
    ratio range (as torchvision)."""
    area = _u(n * tries, scale[0], scale[1], generator, device).view(n, tries)
    logr = _u(n * tries, math.log(ratio[0]), math.log(ratio[1]), generator, device).view(n, tries)
    r = logr.exp()
    w = torch.sqrt(area * r / aspect)  # fraction of the width
    h = torch.sqrt(area / r * aspect)  # fraction of the height
    ok = (w <= 1) & (h <= 1)
    first = torch.where(ok.any(1), ok.float().argmax(1), torch.full((n,), -1, device=device))
    pick = first.clamp_min(0).unsqueeze(1)
    w = w.gather(1, pick).squeeze(1)
    h = h.gather(1, pick).squeeze(1)
    fallback = first < 0
    if fallback.any():  # torchvision: the whole image, clamped to the ratio range
        if aspect < ratio[0]:
            fw, fh = 1.0, aspect / ratio[0]
        elif aspect > ratio[1]:
            fw, fh = ratio[1] / aspect, 1.0
        else:
            fw, fh = 1.0, 1.0
        w = torch.where(fallback, torch.full_like(w, fw), w)
        h = torch.where(fallback, torch.full_like(h, fh), h)
    cx = (1 - w) * (2 * torch.rand(n, generator=generator, device=device) - 1)
    cy = (1 - h) * (2 * torch.rand(n, generator=generator, device=device) - 1)
    return w, h, cx, cy


def random_resized_crop(
    x: torch.Tensor,
    size: int | None = None,
    scale=(0.08, 1.0),
    ratio=(3 / 4, 4 / 3),
    flip_p: float = 0.0,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Crop a random area of each image, resize it to ``size`` (bilinear) and flip it with ``flip_p``."""
    b, c, hh, ww = x.shape
    size = size or hh
    w, h, cx, cy = crop_boxes(b, scale, ratio, generator, x.device, aspect=ww / hh)
    sign = torch.ones(b, device=x.device)
    if flip_p > 0:
        sign = torch.where(torch.rand(b, generator=generator, device=x.device) < flip_p, -1.0, 1.0)
    theta = torch.zeros(b, 2, 3, device=x.device, dtype=x.dtype)
    theta[:, 0, 0] = w * sign
    theta[:, 0, 2] = cx
    theta[:, 1, 1] = h
    theta[:, 1, 2] = cy
    grid = F.affine_grid(theta, (b, c, size, size), align_corners=False)
    return F.grid_sample(x, grid, mode="bilinear", padding_mode="border", align_corners=False)


def horizontal_flip(x: torch.Tensor, p: float = 0.5, generator=None) -> torch.Tensor:
    flip = torch.rand(x.shape[0], generator=generator, device=x.device) < p
    return torch.where(flip.view(-1, 1, 1, 1), x.flip(-1), x)


def grayscale(x: torch.Tensor) -> torch.Tensor:
    if x.shape[1] == 1:
        return x
    w = torch.tensor([0.299, 0.587, 0.114], device=x.device, dtype=x.dtype).view(1, 3, 1, 1)
    return (x * w).sum(1, keepdim=True).expand_as(x)


def _apply(mask: torch.Tensor, new: torch.Tensor, old: torch.Tensor) -> torch.Tensor:
    return torch.where(mask.view(-1, 1, 1, 1), new, old)


def color_jitter(x, brightness=0.4, contrast=0.4, saturation=0.2, hue=0.1, p=0.8, generator=None):
    """Random brightness/contrast/saturation factors in [1 - s, 1 + s] and a hue shift in [-hue, hue]
    (applied in that fixed order), to a random fraction ``p`` of the batch."""
    b, dev = x.shape[0], x.device
    on = torch.rand(b, generator=generator, device=dev) < p
    y = x
    if brightness:
        f = _u(b, max(0, 1 - brightness), 1 + brightness, generator, dev).view(-1, 1, 1, 1)
        y = (y * f).clamp(0, 1)
    if contrast:
        f = _u(b, max(0, 1 - contrast), 1 + contrast, generator, dev).view(-1, 1, 1, 1)
        m = grayscale(y).mean(dim=(1, 2, 3), keepdim=True)
        y = ((y - m) * f + m).clamp(0, 1)
    if x.shape[1] == 3 and saturation:
        f = _u(b, max(0, 1 - saturation), 1 + saturation, generator, dev).view(-1, 1, 1, 1)
        gy = grayscale(y)
        y = ((y - gy) * f + gy).clamp(0, 1)
    if x.shape[1] == 3 and hue:
        y = _hue_shift(y, _u(b, -hue, hue, generator, dev))
    return _apply(on, y, x)


def _hue_shift(x: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
    """Rotate the hue by ``shift`` (fraction of a turn) about the grey axis (YIQ rotation)."""
    a = 2 * math.pi * shift
    cos, sin = torch.cos(a).view(-1, 1, 1), torch.sin(a).view(-1, 1, 1)
    t_yiq = torch.tensor(
        [[0.299, 0.587, 0.114], [0.596, -0.274, -0.322], [0.211, -0.523, 0.312]], device=x.device, dtype=x.dtype
    )
    t_rgb = torch.linalg.inv(t_yiq)
    rot = torch.zeros(x.shape[0], 3, 3, device=x.device, dtype=x.dtype)
    rot[:, 0, 0] = 1
    rot[:, 1, 1], rot[:, 1, 2] = cos[:, 0, 0], -sin[:, 0, 0]
    rot[:, 2, 1], rot[:, 2, 2] = sin[:, 0, 0], cos[:, 0, 0]
    m = t_rgb @ rot @ t_yiq
    return torch.einsum("bij,bjhw->bihw", m, x).clamp(0, 1)


def random_grayscale(x, p=0.2, generator=None):
    return _apply(torch.rand(x.shape[0], generator=generator, device=x.device) < p, grayscale(x), x)


def gaussian_blur(x, p=0.5, sigma=(0.1, 2.0), kernel_frac: float = 0.1, generator=None):
    """Per-sample Gaussian blur with sigma ~ U(sigma) (kernel ~ 10% of the side, odd), to a fraction ``p``."""
    b, c, h, w = x.shape
    k = max(3, int(kernel_frac * h) // 2 * 2 + 1)
    on = torch.rand(b, generator=generator, device=x.device) < p
    s = _u(b, sigma[0], sigma[1], generator, x.device)
    r = torch.arange(k, device=x.device, dtype=x.dtype) - k // 2
    ker = torch.exp(-(r[None] ** 2) / (2 * s[:, None] ** 2))
    ker = ker / ker.sum(1, keepdim=True)  # [b, k]
    y = x.reshape(1, b * c, h, w)
    kx = ker.repeat_interleave(c, 0).view(b * c, 1, 1, k)
    ky = ker.repeat_interleave(c, 0).view(b * c, 1, k, 1)
    y = F.conv2d(F.pad(y, (k // 2, k // 2, 0, 0), mode="reflect"), kx, groups=b * c)
    y = F.conv2d(F.pad(y, (0, 0, k // 2, k // 2), mode="reflect"), ky, groups=b * c)
    return _apply(on, y.view(b, c, h, w), x)


def solarize(x, p=0.2, threshold=0.5, generator=None):
    on = torch.rand(x.shape[0], generator=generator, device=x.device) < p
    return _apply(on, torch.where(x >= threshold, 1 - x, x), x)


@dataclass
class View:
    """One augmented view: crop, flip, jitter, grayscale, blur, solarize (each with its probability)."""

    size: int | None = None
    scale: tuple = (0.08, 1.0)
    flip_p: float = 0.5
    jitter: tuple = (0.4, 0.4, 0.2, 0.1)
    jitter_p: float = 0.8
    gray_p: float = 0.2
    blur_p: float = 0.0
    solarize_p: float = 0.0

    def __call__(self, x, generator=None):
        y = random_resized_crop(x, self.size, self.scale, flip_p=self.flip_p, generator=generator)
        if self.jitter_p > 0:
            y = color_jitter(y, *self.jitter, p=self.jitter_p, generator=generator)
        if self.gray_p > 0:
            y = random_grayscale(y, self.gray_p, generator)
        if self.blur_p > 0:
            y = gaussian_blur(y, self.blur_p, generator=generator)
        if self.solarize_p > 0:
            y = solarize(y, self.solarize_p, generator=generator)
        return y


@dataclass
class Pipeline:
    """Two views of a batch: ``pipeline(x, generator) -> (v1, v2)``."""

    view1: View
    view2: View

    def __call__(self, x, generator=None):
        return self.view1(x, generator), self.view2(x, generator)


def preset(name: str, size: int | None = None, small_images: bool = True, code_extras: bool = True) -> Pipeline:
    """Per-method two-view pipelines (the methods' papers, as lightly's CIFAR benchmarks set them:
    no blur on small images) and ReLA's weak pipeline."""
    if name == "rela_weak":
        extra = (
            dict(jitter=(0.8, 0.8, 0.8, 0.2), jitter_p=0.8, gray_p=0.2)
            if code_extras
            else dict(jitter_p=0.0, gray_p=0.0)
        )
        v = View(size, (0.5, 1.0), 0.5, **extra)
        return Pipeline(v, v)
    blur = 0.0 if small_images else 1.0
    if name == "byol":  # Grill et al. 2020, Table 6: asymmetric blur and solarize
        return Pipeline(View(size, blur_p=blur), View(size, blur_p=0.0 if small_images else 0.1, solarize_p=0.2))
    if name in ("simclr", "moco", "simsiam", "swav", "dino", "barlow_twins", "vicreg"):
        strength = {"simclr": (0.8, 0.8, 0.8, 0.2), "dino": (0.4, 0.4, 0.2, 0.1)}.get(name, (0.4, 0.4, 0.2, 0.1))
        sol = 0.2 if name in ("barlow_twins", "vicreg", "dino") else 0.0
        v1 = View(size, jitter=strength, blur_p=blur * (1.0 if name in ("barlow_twins", "vicreg", "dino") else 0.5))
        v2 = View(
            size,
            jitter=strength,
            blur_p=blur * (0.1 if name in ("barlow_twins", "vicreg", "dino") else 0.5),
            solarize_p=sol,
        )
        return Pipeline(v1, v2)
    raise ValueError(f"unknown augmentation preset {name!r}")
