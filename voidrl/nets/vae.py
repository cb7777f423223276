"""Leite's (2022) vision module: a convolutional VAE on rendered frames, and its file on disk.

Encoder: four stride-2 convolutions (32/64/128/256, ReLU), 2x2 as Leite's (2022) or 4x4 with padding 1 as
World Models', each halving the frame; flatten, one linear layer to the mean and log-variance of a
``latent_size`` Gaussian. Decoder (World Models' shape): linear to 1024 (ReLU) as a 1x1
map, transposed convolutions 128@5x5/2, 64@5x5/2, 32@7x7/2 (ReLU) to 31x31, and a last one to the frame
size (3@6x6/3 for 96x96).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from torch import nn

from voidrl.configs.choices import ENCODER_KERNELS, LIKELIHOODS
from voidrl.io.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from voidrl.math.elbo import elbo, reparameterize

VAE_FILE_KIND = "voidrl-vae"


class VisionFileError(ValueError):
    """A vision file that is missing, unreadable, or not the one a run was trained with."""


@dataclass(frozen=True)
class VAEShape:
    """What a saved VAE is: everything needed to rebuild it before loading its weights."""

    image_size: int = 96
    """Frames are image_size x image_size RGB; a multiple of 16, at least 32."""
    latent_size: int = 8
    """Dimensions of the Gaussian latent the agent sees."""
    likelihood: str = "bernoulli"
    """Pixel model of the decoder: bernoulli (logits) or gaussian (means with std gaussian_std)."""
    gaussian_std: float = 0.1
    """With likelihood gaussian: the fixed standard deviation of each pixel's intensity in [0, 1]."""
    encoder_kernel: int = 2
    """Kernel size of the encoder's stride-2 convolutions: 2 (Leite's (2022); each pixel seen by one window per
    layer) or 4 (overlapping windows, padding 1; what a thin limb spanning window edges needs)."""

    def validate(self) -> None:
        if self.image_size < 32 or self.image_size % 16:
            raise ValueError(f"image_size must be a multiple of 16 of at least 32, got {self.image_size}")
        if self.latent_size < 1:
            raise ValueError(f"latent_size must be a positive integer, got {self.latent_size}")
        if self.likelihood not in LIKELIHOODS:
            raise ValueError(f"likelihood must be one of {', '.join(LIKELIHOODS)}, got {self.likelihood!r}")
        if not self.gaussian_std > 0:
            raise ValueError(f"gaussian_std must be positive, got {self.gaussian_std}")
        if self.encoder_kernel not in ENCODER_KERNELS:
            raise ValueError(f"encoder_kernel must be one of {', '.join(map(str, ENCODER_KERNELS))}, got {self.encoder_kernel}")


class VAE(nn.Module):
    """``encode``: uint8 frames ``[B, 3, S, S]`` -> ``(mean, log_var)`` ``[B, Z]``; ``decode``: ``[B, Z]`` ->
    ``[B, 3, S, S]`` logits (bernoulli) or means (gaussian)."""

    def __init__(self, shape: VAEShape = VAEShape()):
        super().__init__()
        shape.validate()
        self.shape = shape
        size, channels = shape.image_size, 3
        layers: list[nn.Module] = []
        for out_channels in (32, 64, 128, 256):
            layers += [nn.Conv2d(channels, out_channels, shape.encoder_kernel, 2, padding=shape.encoder_kernel // 2 - 1), nn.ReLU()]
            channels = out_channels
        self.encoder = nn.Sequential(*layers, nn.Flatten(), nn.Linear(256 * (size // 16) ** 2, 2 * shape.latent_size))
        last_stride = size // 32  # (31 - 1) * stride + kernel = size
        self.decoder_input = nn.Sequential(nn.Linear(shape.latent_size, 1024), nn.ReLU())
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(1024, 128, 5, 2), nn.ReLU(),
            nn.ConvTranspose2d(128, 64, 5, 2), nn.ReLU(),
            nn.ConvTranspose2d(64, 32, 7, 2), nn.ReLU(),
            nn.ConvTranspose2d(32, 3, size - 30 * last_stride, last_stride),
        )

    def encode(self, frames: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.encode_images(frames.float() * (1.0 / 255.0))

    def encode_images(self, images: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``encode`` for frames already scaled to [0, 1] floats."""
        mean, log_var = self.encoder(images).chunk(2, dim=-1)
        return mean, log_var

    def decode(self, latent: torch.Tensor) -> torch.Tensor:
        return self.decoder(self.decoder_input(latent).view(-1, 1024, 1, 1))

    def reconstruct(self, frames: torch.Tensor) -> torch.Tensor:
        """Frames decoded from their latent means, as intensities in [0, 1] ``[B, 3, S, S]``."""
        decoded = self.decode(self.encode(frames)[0])
        return decoded.sigmoid() if self.shape.likelihood == "bernoulli" else decoded.clamp(0.0, 1.0)

    def loss(self, frames: torch.Tensor, generator: torch.Generator | None = None, pixel_weights: torch.Tensor | None = None
             ) -> tuple[torch.Tensor, dict[str, float]]:
        """Negative ELBO per frame, averaged over the batch, and its parts (nats per frame); ``pixel_weights
        [B, S, S]`` weight each pixel's reconstruction term (``math.elbo.log_likelihood``)."""
        images = frames.float() * (1.0 / 255.0)
        mean, log_var = self.encode_images(images)
        decoded = self.decode(reparameterize(mean, log_var, generator))
        bound, reconstruction, kl = elbo(images, decoded, mean, log_var, self.shape.likelihood, self.shape.gaussian_std, pixel_weights)
        return -bound.mean(), {"reconstruction": -reconstruction.mean().item(), "kl": kl.mean().item()}


def file_sha256(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def save_vae(path: str | os.PathLike, vae: VAE, env_id: str) -> str:
    """Write the VAE atomically (a voidrl checkpoint holding only tensors and plain values); returns the
    file's sha256, by which runs that use it refer to it."""
    save_checkpoint(path, {"kind": VAE_FILE_KIND, "shape": asdict(vae.shape), "env": env_id, "model": vae.state_dict()})
    return file_sha256(path)


def load_vae(path: str | os.PathLike) -> tuple[VAE, str, str]:
    """``(vae, env id it was trained on, sha256 of the file)``; a ``VisionFileError`` of one line if the file is
    missing, unreadable or not a VAE."""
    path = Path(path)
    if path.is_dir():
        raise VisionFileError(f"vision file {str(path)!r} is a directory; give the VAE file in it (RUN_DIR/vae.pt)")
    if not path.is_file():
        raise VisionFileError(f"vision file {str(path)!r} does not exist (write one with `voidrl vae train`)")
    try:
        payload = load_checkpoint(path)
    except CheckpointError as error:
        raise VisionFileError(f"vision file {str(path)!r} is not a VAE written by `voidrl vae train` ({error})") from None
    if payload.get("kind") != VAE_FILE_KIND:
        raise VisionFileError(f"vision file {str(path)!r} is a voidrl checkpoint but not a VAE (written by `voidrl vae train`)")
    try:
        vae = VAE(VAEShape(**payload["shape"]))
        vae.load_state_dict(payload["model"])
    except (KeyError, TypeError, ValueError, RuntimeError) as error:
        raise VisionFileError(f"vision file {str(path)!r} does not hold a VAE this version can rebuild "
                              f"({type(error).__name__}: {str(error).splitlines()[0]})") from None
    return vae, payload["env"], file_sha256(path)
