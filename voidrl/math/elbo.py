"""The variational autoencoder's evidence lower bound (Kingma & Welling 2014) as pure functions.

Images are ``[B, C, H, W]`` floats in [0, 1]; the approximate posterior q(z|x) is a diagonal Gaussian
given by ``mean`` and ``log_var`` ``[B, Z]``; the prior is N(0, I).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from voidrl.configs.choices import LIKELIHOODS


def reparameterize(mean: torch.Tensor, log_var: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """z = mean + exp(log_var / 2) * eps, eps ~ N(0, I): a sample of q(z|x) through which gradients reach
    ``mean`` and ``log_var``. ``[B, Z]`` -> ``[B, Z]``. The noise is drawn on ``generator``'s device (so a CPU
    generator's stream, and its saved state, do not depend on where the VAE runs) and moved to ``mean``'s."""
    where = generator.device if generator is not None else mean.device
    noise = torch.randn(mean.shape, generator=generator, device=where, dtype=mean.dtype).to(mean.device)
    return mean + (0.5 * log_var).exp() * noise


def kl_to_standard_normal(mean: torch.Tensor, log_var: torch.Tensor) -> torch.Tensor:
    """KL(N(mean, exp(log_var)) || N(0, I)) = -1/2 sum(1 + log_var - mean^2 - exp(log_var)), ``[B]``."""
    return -0.5 * (1.0 + log_var - mean.square() - log_var.exp()).sum(-1)


def log_likelihood(images: torch.Tensor, decoded: torch.Tensor, likelihood: str, gaussian_std: float = 0.1,
                   pixel_weights: torch.Tensor | None = None) -> torch.Tensor:
    """log p(x|z) summed over pixels, ``[B]``; with ``pixel_weights [B, H, W]`` each pixel's term (all its channels)
    is weighted so.

    ``bernoulli``: ``decoded`` are logits, each intensity x in [0, 1] scored as x log p + (1 - x) log(1 - p)
    (the continuous Bernoulli's unnormalised density, the usual choice for images). ``gaussian``: ``decoded``
    are means, N(x; decoded, gaussian_std^2) per pixel.
    """
    if likelihood == "bernoulli":
        per_pixel = -F.binary_cross_entropy_with_logits(decoded, images, reduction="none")
    elif likelihood == "gaussian":
        per_pixel = -0.5 * ((images - decoded) / gaussian_std).square() - math.log(gaussian_std) - 0.5 * math.log(2 * math.pi)
    else:
        raise ValueError(f"likelihood must be one of {', '.join(LIKELIHOODS)}, got {likelihood!r}")
    if pixel_weights is not None:
        per_pixel = per_pixel * pixel_weights.unsqueeze(1)
    return per_pixel.flatten(1).sum(-1)


def elbo(images: torch.Tensor, decoded: torch.Tensor, mean: torch.Tensor, log_var: torch.Tensor, likelihood: str,
         gaussian_std: float = 0.1, pixel_weights: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(elbo, log_likelihood, kl)``, each ``[B]``: ELBO = log p(x|z) - KL(q(z|x) || p(z)) with z drawn
    from q (one sample, already decoded into ``decoded``); ``pixel_weights`` as ``log_likelihood``'s (with
    weights other than 1 the objective is a weighted bound, no longer the ELBO)."""
    reconstruction = log_likelihood(images, decoded, likelihood, gaussian_std, pixel_weights)
    kl = kl_to_standard_normal(mean, log_var)
    return reconstruction - kl, reconstruction, kl
