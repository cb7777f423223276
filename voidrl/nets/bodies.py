"""Feature extractors: observation batch ``[B, *obs_shape]`` -> features ``[B, out_features]``.

Pixel bodies take uint8 frames and scale them inside the network, so rollouts
never hold float copies of observations.
"""

from __future__ import annotations

import math
from typing import NamedTuple

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


# One encoder per key of a Dict observation that holds images (Stable-Baselines3's MultiInputPolicy): the
# environment side (voidrl.envs.gym_backend.KeyedFlatten) lays the Dict out as one vector, key after key, and its
# space's shape is a KeyedShape, the vector's (D,) naming each key's part. What stores or moves observations sees a
# vector; network auto reads the parts.


class ObservationPart(NamedTuple):
    """One key of a Dict observation within its flat vector: ``shape`` is ``[C, H, W]`` for an image (channels
    first, values 0-255), ``(size,)`` otherwise; it fills ``vector[offset : offset + prod(shape)]``."""

    key: str
    shape: tuple[int, ...]
    image: bool
    offset: int

    @property
    def size(self) -> int:
        return math.prod(self.shape)


class KeyedShape(tuple):
    """The shape ``(D,)`` of a Dict observation laid out as one vector, with its ``parts`` (``ObservationPart``, in
    order): a tuple like any observation shape, which the networks' ``auto`` reads further."""

    parts: tuple[ObservationPart, ...]

    def __new__(cls, shape: tuple[int, ...], parts: tuple[ObservationPart, ...]) -> KeyedShape:
        keyed = super().__new__(cls, shape)
        keyed.parts = tuple(ObservationPart(*part) for part in parts)
        if sum(part.size for part in keyed.parts) != math.prod(shape):
            raise ValueError(f"the parts of a keyed observation fill {sum(part.size for part in keyed.parts)} entries, "
                             f"not the {math.prod(shape)} of its shape {tuple(shape)}")
        return keyed

    def __getnewargs__(self) -> tuple[tuple[int, ...], tuple[ObservationPart, ...]]:
        return tuple(self), self.parts

    def has_images(self) -> bool:
        return any(part.image for part in self.parts)

    def describe(self) -> str:
        """``auto``'s choice in words: which key goes through which body."""
        images = [f"{image_network(part.shape)} CNN for {part.key!r} {list(part.shape)}" for part in self.parts if part.image]
        vectors = [f"{part.key!r} [{part.size}]" for part in self.parts if not part.image]
        return "multi-input: " + ", ".join(images + ([f"one MLP for {', '.join(vectors)}"] if vectors else []))


def image_network(shape: tuple[int, ...]) -> str:
    """The CNN an image of ``shape [C, H, W]`` gets: nature at 36 pixels a side or more, minatar below."""
    return "nature" if min(shape[1:]) >= 36 else "minatar"


class MultiInputBody(nn.Module):
    """``obs [B, D]`` (a ``KeyedShape``'s vector) -> features ``[B, F]``: each image part through a CNN of its own
    (``image_network``), the other parts concatenated through one MLP of ``hidden_sizes``, the features
    concatenated in the parts' order, images first."""

    def __init__(self, parts: tuple[ObservationPart, ...], hidden_sizes: tuple[int, ...]):
        super().__init__()
        self.image_parts = [part for part in parts if part.image]
        self.vector_parts = [part for part in parts if not part.image]
        self.image_bodies = nn.ModuleList(IMAGE_BODIES[image_network(part.shape)](part.shape) for part in self.image_parts)
        vector_size = sum(part.size for part in self.vector_parts)
        self.vector_body = MLP(vector_size, hidden_sizes) if vector_size else None
        self.out_features = sum(body.out_features for body in self.image_bodies) + (self.vector_body.out_features if self.vector_body else 0)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        features = [body(obs[:, part.offset : part.offset + part.size].reshape(-1, *part.shape))
                    for part, body in zip(self.image_parts, self.image_bodies)]
        if self.vector_body is not None:
            features.append(self.vector_body(torch.cat([obs[:, part.offset : part.offset + part.size] for part in self.vector_parts], 1)))
        return torch.cat(features, 1)


IMAGE_BODIES = {"nature": nature_cnn, "minatar": minatar_cnn}
"""The CNNs ``MultiInputBody`` gives an image key, by ``image_network``'s name."""


def auto_network(obs_shape: tuple[int, ...]) -> str:
    """The body ``network auto`` builds: mlp for vectors, nature for frames of 36 pixels a side or more, minatar for
    smaller frames (``image_network``), multi-input for a Dict observation holding images (a ``KeyedShape``: one
    encoder per key)."""
    if isinstance(obs_shape, KeyedShape) and obs_shape.has_images():
        return "multi-input"
    if len(obs_shape) == 1:
        return "mlp"
    if len(obs_shape) == 3:
        return image_network(obs_shape)
    raise ValueError(f"no default network for observations of shape {obs_shape}")


def make_body(network: str, obs_shape: tuple[int, ...], hidden_sizes: tuple[int, ...]) -> nn.Module:
    """Body by name (``auto``: ``auto_network``)."""
    if network == "auto":
        network = auto_network(obs_shape)
    if network == "multi-input":
        return MultiInputBody(obs_shape.parts, hidden_sizes)
    if network == "mlp":
        return MLP(math.prod(obs_shape), hidden_sizes)
    if len(obs_shape) != 3:
        raise ValueError(f"network {network!r} needs [C, H, W] observations, got shape {obs_shape}")
    return {"nature": nature_cnn, "dqn2013": dqn2013_cnn, "minatar": minatar_cnn, "apt": APTBody}[network](obs_shape)
