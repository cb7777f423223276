"""APT's representation networks: encoder f (frames -> 15-d latent) and projection head g.

Unlike the policy bodies, the encoder takes float frames already scaled to [0, 1]:
the contrastive views are augmented in that range, and the particle reward must
see frames scaled the same way.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.parametrizations import spectral_norm

from voidrl.configs.choices import HEAD_NORMS

# (out_channels, kernel, stride) per convolution
ATARI_CONVS = ((32, 8, 4), (64, 4, 2), (64, 3, 1))
SMALL_CONVS = ((32, 3, 1), (32, 3, 1))


class APTEncoder(nn.Module):
    """Convolutions with ELU (spectrally normalised by default), fc, LayerNorm, tanh: ``[B, C, H, W] -> [B, 15]``.

    84x84 frames use Müller's (2022) 32@8x8/4, 64@4x4/2, 64@3x3/1 (flatten 3136); frames
    smaller than 36 pixels a side (MinAtar) use 32@3x3/1 twice. The latent lies in [-1, 1].
    """

    def __init__(self, obs_shape: tuple[int, ...], out_features: int = 15, spectral: bool = True):
        super().__init__()
        channels, height, width = obs_shape
        specs = SMALL_CONVS if min(height, width) < 36 else ATARI_CONVS
        layers: list[nn.Module] = []
        for out_channels, kernel, stride in specs:
            conv = nn.Conv2d(channels, out_channels, kernel, stride)
            layers += [spectral_norm(conv) if spectral else conv, nn.ELU()]
            channels = out_channels
            height, width = (height - kernel) // stride + 1, (width - kernel) // stride + 1
        if min(height, width) < 1:
            raise ValueError(f"APTEncoder: frames of shape {tuple(obs_shape)} are too small for its convolutions")
        layers.append(nn.Flatten())
        self.convs = nn.Sequential(*layers).to(memory_format=torch.channels_last)
        flat = channels * height * width
        self.head = nn.Sequential(nn.Linear(flat, out_features), nn.LayerNorm(out_features), nn.Tanh())
        self.obs_shape = tuple(obs_shape)
        self.out_features = out_features

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not x.is_floating_point():
            raise TypeError(f"APTEncoder takes float frames in [0, 1], got {x.dtype}")
        # channels-last convolutions run about 2x faster on CPU (oneDNN) than NCHW
        return self.head(self.convs(x.contiguous(memory_format=torch.channels_last)))



def plain_encoder_state(state: dict[str, torch.Tensor], obs_shape: tuple[int, ...]) -> dict[str, torch.Tensor]:
    """The state of an ``APTEncoder`` without spectral norm that computes what the encoder saved in
    ``state`` computes in eval mode: each convolution's weight divided by its stored spectral-norm estimate.
    A state without spectral norm is returned as it is."""
    spectral = any(".parametrizations.weight." in key for key in state)
    if not spectral:
        return dict(state)
    source = APTEncoder(obs_shape, spectral=True)
    source.load_state_dict(state)
    plain = APTEncoder(obs_shape, spectral=False)
    source.eval()  # spectral norm's sigma from the saved power-iteration vectors, no new iteration
    with torch.no_grad():
        for module, copy in zip(source.convs, plain.convs):
            if isinstance(module, nn.Conv2d):
                copy.weight.copy_(module.weight)
                copy.bias.copy_(module.bias)
        plain.head.load_state_dict(source.head.state_dict())
    return plain.state_dict()


class ProjectionHead(nn.Sequential):
    """SimCLR's projection g: fc ``in_features`` -> 128, [BatchNorm or LayerNorm], ELU, fc 128 -> 64;
    the loss sees g(f(x)). Müller's (2022) head has no normalisation; SimCLR's and SPR's heads use BatchNorm."""

    def __init__(self, in_features: int = 15, norm: str = "none"):
        if norm not in HEAD_NORMS:
            raise ValueError(f"head_norm must be one of {', '.join(HEAD_NORMS)}, got {norm!r}")
        normalisation = {"none": [], "batch": [nn.BatchNorm1d(128)], "layer": [nn.LayerNorm(128)]}[norm]
        super().__init__(nn.Linear(in_features, 128), *normalisation, nn.ELU(), nn.Linear(128, 64))
