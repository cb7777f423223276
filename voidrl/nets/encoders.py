"""APT's representation networks: encoder f (frames -> 15-d latent) and projection head g.

Unlike the policy bodies, the encoder takes float frames already scaled to [0, 1]:
the contrastive views are augmented in that range, and the particle reward must
see frames scaled the same way.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.parametrizations import spectral_norm

# (out_channels, kernel, stride) per convolution
ATARI_CONVS = ((32, 8, 4), (64, 4, 2), (64, 3, 1))
SMALL_CONVS = ((32, 3, 1), (32, 3, 1))


class APTEncoder(nn.Module):
    """Spectrally normalised convolutions with ELU, fc, LayerNorm, tanh: ``[B, C, H, W] -> [B, 15]``.

    84x84 frames use the thesis's 32@8x8/4, 64@4x4/2, 64@3x3/1 (flatten 3136); frames
    smaller than 36 pixels a side (MinAtar) use 32@3x3/1 twice. The latent lies in [-1, 1].
    """

    def __init__(self, obs_shape: tuple[int, ...], out_features: int = 15):
        super().__init__()
        channels, height, width = obs_shape
        specs = SMALL_CONVS if min(height, width) < 36 else ATARI_CONVS
        layers: list[nn.Module] = []
        for out_channels, kernel, stride in specs:
            layers += [spectral_norm(nn.Conv2d(channels, out_channels, kernel, stride)), nn.ELU()]
            channels = out_channels
            height, width = (height - kernel) // stride + 1, (width - kernel) // stride + 1
        if min(height, width) < 1:
            raise ValueError(f"APTEncoder: frames of shape {tuple(obs_shape)} are too small for its convolutions")
        layers.append(nn.Flatten())
        self.convs = nn.Sequential(*layers).to(memory_format=torch.channels_last)
        flat = channels * height * width
        self.head = nn.Sequential(nn.Linear(flat, out_features), nn.LayerNorm(out_features), nn.Tanh())
        self.out_features = out_features

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not x.is_floating_point():
            raise TypeError(f"APTEncoder takes float frames in [0, 1], got {x.dtype}")
        # channels-last convolutions run about 2x faster on CPU (oneDNN) than NCHW
        return self.head(self.convs(x.contiguous(memory_format=torch.channels_last)))


class ProjectionHead(nn.Sequential):
    """SimCLR's projection g: fc ``in_features`` -> 128, ELU, fc 128 -> 64; the loss sees g(f(x))."""

    def __init__(self, in_features: int = 15):
        super().__init__(nn.Linear(in_features, 128), nn.ELU(), nn.Linear(128, 64))
