"""Feature extractors: observation batch ``[B, *obs_shape]`` -> features ``[B, out_features]``.

Pixel bodies take uint8 frames and scale them inside the network, so rollouts
never hold float copies of observations.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from voidrl.nets.encoders import APTEncoder


def orthogonal_init(layer: nn.Module, gain: float = math.sqrt(2.0)) -> nn.Module:
    nn.init.orthogonal_(layer.weight, gain)
    nn.init.zeros_(layer.bias)
    return layer


class MLP(nn.Module):
    """Fully connected tanh network (the PPO paper's MuJoCo body)."""

    def __init__(self, in_features: int, hidden_sizes: tuple[int, ...] = (64, 64)):
        super().__init__()
        layers: list[nn.Module] = []
        for size in hidden_sizes:
            layers += [orthogonal_init(nn.Linear(in_features, size)), nn.Tanh()]
            in_features = size
        self.net = nn.Sequential(*layers)
        self.out_features = in_features
        self._linears = [layer for layer in layers if isinstance(layer, nn.Linear)]

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        # the layers' functions called directly: a module call per layer took a third of the body's time on a CPU
        x = obs.flatten(1).float()
        for linear in self._linears:
            x = torch.tanh(F.linear(x, linear.weight, linear.bias))
        return x


class PixelBody(nn.Module):
    """Convolutions, flatten, one hidden fc layer; input uint8 scaled to [0, 1] plus ``offset``."""

    def __init__(self, convs: list[nn.Conv2d], obs_shape: tuple[int, ...], hidden: int, offset: float = 0.0):
        super().__init__()
        layers: list[nn.Module] = []
        for conv in convs:
            layers += [orthogonal_init(conv), nn.ReLU()]
        layers.append(nn.Flatten())
        self.convs = nn.Sequential(*layers)
        with torch.no_grad():
            try:
                flat = self.convs(torch.zeros(1, *obs_shape)).shape[1]
            except RuntimeError:
                raise ValueError(f"frames of shape {tuple(obs_shape)} are too small for this network's convolutions") from None
        self.fc = nn.Sequential(orthogonal_init(nn.Linear(flat, hidden)), nn.ReLU())
        self.offset = offset
        self.out_features = hidden
        self.convs.to(memory_format=torch.channels_last)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        # channels-last: PPO's update 1.2-1.6x faster on CPU (oneDNN) than NCHW at 64-96 px (benchmarks/bench_pixels.py)
        # one float copy scaled in place: each further copy of a minibatch of frames costs as much as a convolution
        x = obs.to(torch.float32, memory_format=torch.channels_last, copy=True).mul_(1.0 / 255.0)
        if self.offset:
            x.add_(self.offset)
        return self.fc(self.convs(x))


def nature_cnn(obs_shape: tuple[int, ...]) -> PixelBody:
    """Mnih et al. (2015): 32@8x8/4, 64@4x4/2, 64@3x3/1, fc 512."""
    channels = obs_shape[0]
    convs = [nn.Conv2d(channels, 32, 8, 4), nn.Conv2d(32, 64, 4, 2), nn.Conv2d(64, 64, 3, 1)]
    return PixelBody(convs, obs_shape, 512)


def dqn2013_cnn(obs_shape: tuple[int, ...]) -> PixelBody:
    """Müller's (2022) PPG policy body (the 2013 DQN network): 16@8x8/4, 32@4x4/2, fc 256, input x/255 - 0.5."""
    channels = obs_shape[0]
    convs = [nn.Conv2d(channels, 16, 8, 4), nn.Conv2d(16, 32, 4, 2)]
    return PixelBody(convs, obs_shape, 256, offset=-0.5)


def minatar_cnn(obs_shape: tuple[int, ...]) -> PixelBody:
    """Young & Tian (2019) MinAtar network: 16@3x3/1, fc 128."""
    return PixelBody([nn.Conv2d(obs_shape[0], 16, 3, 1)], obs_shape, 128)


class APTBody(nn.Module):
    """APT's encoder architecture as a policy body: uint8 frames scaled to [0, 1], the encoder's
    15-d latent (plain convolutions: spectral norm is folded into weights loaded from a pre-trained
    encoder), fc 256, ReLU. ``init_parts apt_encoder`` starts ``encoder`` from a pre-trained APT encoder."""

    def __init__(self, obs_shape: tuple[int, ...], hidden: int = 256):
        super().__init__()
        self.encoder = APTEncoder(obs_shape, spectral=False)
        self.fc = nn.Sequential(orthogonal_init(nn.Linear(self.encoder.out_features, hidden)), nn.ReLU())
        self.out_features = hidden

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.fc(self.encoder(obs.float() * (1.0 / 255.0)))


def auto_network(obs_shape: tuple[int, ...]) -> str:
    """The body ``network auto`` builds: mlp for vectors, nature for frames of 36 pixels a side or more, minatar for
    smaller frames."""
    if len(obs_shape) == 1:
        return "mlp"
    if len(obs_shape) == 3:
        return "nature" if min(obs_shape[1:]) >= 36 else "minatar"
    raise ValueError(f"no default network for observations of shape {obs_shape}")


def make_body(network: str, obs_shape: tuple[int, ...], hidden_sizes: tuple[int, ...]) -> nn.Module:
    """Body by name (``auto``: ``auto_network``)."""
    if network == "auto":
        network = auto_network(obs_shape)
    if network == "mlp":
        return MLP(math.prod(obs_shape), hidden_sizes)
    if len(obs_shape) != 3:
        raise ValueError(f"network {network!r} needs [C, H, W] observations, got shape {obs_shape}")
    return {"nature": nature_cnn, "dqn2013": dqn2013_cnn, "minatar": minatar_cnn, "apt": APTBody}[network](obs_shape)
