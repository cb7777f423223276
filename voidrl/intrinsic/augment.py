"""Image augmentations for contrastive training and replayed frames, on float frames ``[B, C, H, W]`` in [0, 1].

Every sample draws its own random parameters; pass a ``torch.Generator`` for
reproducible draws.
"""

from __future__ import annotations

import torch


def translate(x: torch.Tensor, offsets: torch.Tensor, pad: int, out: torch.Tensor | None = None) -> torch.Tensor:
    """Replicate-pad by ``pad``, then crop each sample back to H x W at its own offset.

    Done as one gather with clamped indices (no padded copy), so it works on uint8; samples left in
    place (offset ``(pad, pad)``, most of them at ATC's shift probability of 0.1) are copied, not gathered.

    Args:
        x: ``[B, C, H, W]`` frames, any dtype.
        offsets: long ``[B, 2]`` crop corners (row, column), each in ``[0, 2 * pad]``;
            ``(pad, pad)`` leaves a sample unchanged.
        out: optional ``[B, C, H, W]`` tensor to write the result into (any layout, any dtype that holds
            x's values exactly, e.g. a reused float32 buffer: the conversion then costs no second copy).
    Returns:
        ``[B, C, H, W]`` exact integer-pixel translations (no interpolation), channels-last (or ``out``).
    """
    moved = (offsets != pad).any(1)
    if bool(moved.all()):
        shifted = _gather_shifted(x, offsets, pad)
        return shifted if out is None else out.copy_(shifted)
    if out is None:
        out = x.contiguous(memory_format=torch.channels_last)
        out = out.clone() if out is x else out
    else:
        out.copy_(x)
    if bool(moved.any()):
        out[moved] = _gather_shifted(x[moved], offsets[moved], pad).to(out.dtype)
    return out


def _gather_shifted(x: torch.Tensor, offsets: torch.Tensor, pad: int) -> torch.Tensor:
    batch, _, height, width = x.shape
    rows = (offsets[:, 0, None] - pad + torch.arange(height, device=x.device)).clamp(0, height - 1)
    cols = (offsets[:, 1, None] - pad + torch.arange(width, device=x.device)).clamp(0, width - 1)
    samples = torch.arange(batch, device=x.device)[:, None, None]
    # advanced indices around a slice put their dimensions first: [B, H, W, C]
    return x[samples, :, rows[:, :, None], cols[:, None, :]].permute(0, 3, 1, 2)


def random_shift(x: torch.Tensor, pad: int = 4, generator: torch.Generator | None = None) -> torch.Tensor:
    """Random translation by up to ``pad`` pixels each way (DrQ's pad-and-crop), per sample."""
    offsets = torch.randint(0, 2 * pad + 1, (x.shape[0], 2), generator=generator, device=x.device)
    return translate(x, offsets, pad)


def shift_sequences(frames: torch.Tensor, pad: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """Frames ``[L, B, C, H, W]`` with each sequence ``b`` translated by its own random offset of up to ``pad`` pixels
    each way, the same offset at all its ``L`` steps (DrQ's pad-and-crop on replayed sequences, replicate padding);
    ``[L, B, C, H, W]``, the dtype kept. Two index selections a sequence: twice as fast as ``translate``'s gather over
    all ``L x B`` frames (8 sequences of 9 Atari stacks: 2.5 against 7.5 ms on one CPU thread)."""
    height, width = frames.shape[-2:]
    offsets = torch.randint(-pad, pad + 1, (frames.shape[1], 2), generator=generator, device=frames.device)
    rows, cols = torch.arange(height, device=frames.device), torch.arange(width, device=frames.device)
    shifted = torch.empty_like(frames)
    for sequence, (row, col) in enumerate(offsets.tolist()):
        shifted[:, sequence] = frames[:, sequence].index_select(-2, (rows + row).clamp(0, height - 1)).index_select(-1, (cols + col).clamp(0, width - 1))
    return shifted


def brighten(x: torch.Tensor, deltas: torch.Tensor) -> torch.Tensor:
    """Add ``deltas [B]`` to each sample of ``x [B, ...]`` (in [0, 1]), clamp to [0, 1]."""
    return brighten_(x.clone(), deltas)


def brighten_(x: torch.Tensor, deltas: torch.Tensor) -> torch.Tensor:
    """``brighten`` in place (no second copy of a large batch)."""
    return x.add_(deltas.to(x.dtype).view(-1, *[1] * (x.dim() - 1))).clamp_(0.0, 1.0)


def random_brightness(
    x: torch.Tensor, max_delta: float = 0.2, generator: torch.Generator | None = None
) -> torch.Tensor:
    """Add a per-sample delta drawn uniformly from [-max_delta, max_delta], clamp to [0, 1]."""
    return brighten(x, (2.0 * torch.rand(x.shape[0], generator=generator, device=x.device) - 1.0) * max_delta)


View = tuple[torch.Tensor, torch.Tensor]
"""One augmented view's random parameters: crop corners ``[B, 2]`` and brightness deltas ``[B]``."""


def draw_view(batch: int, pad: int = 4, max_delta: float = 0.2, generator: torch.Generator | None = None,
              device: torch.device | str = "cpu", shift_probability: float = 1.0) -> View:
    """Random parameters of one view of ``batch`` samples (slice both to augment a chunk of them).

    Each sample is shifted with probability ``shift_probability`` (ATC shifts 10% of Atari samples)
    and otherwise left in place; its brightness delta is drawn from [-max_delta, max_delta]."""
    offsets = torch.randint(0, 2 * pad + 1, (batch, 2), generator=generator, device=device)
    if shift_probability < 1.0:
        unshifted = torch.rand(batch, generator=generator, device=device) >= shift_probability
        offsets[unshifted] = pad
    deltas = (2.0 * torch.rand(batch, generator=generator, device=device) - 1.0) * max_delta
    return offsets, deltas


def augment(
    frames: torch.Tensor, pad: int = 4, max_delta: float = 0.2, generator: torch.Generator | None = None,
    view: View | None = None, out: torch.Tensor | None = None,
) -> torch.Tensor:
    """uint8 frames ``[B, C, H, W]`` in 0..255 -> one augmented float32 view in [0, 1].

    ``view`` fixes the random parameters (``draw_view``); by default they are drawn here.
    Pixels are scaled *before* the brightness change so that its [0, 1] clamp
    acts on the frames' real range. The shift runs on the uint8 frames (it only moves
    pixels), so a batch of 512 Atari stacks never exists as a padded float copy.
    ``out``: a float32 ``[B, C, H, W]`` buffer (channels-last for the encoders) that receives the view,
    the same values as without it: a fresh 58 MB view of 512 Atari stacks costs ~20 ms of page faults
    on CPU, more than the augmentation itself.
    """
    offsets, deltas = view if view is not None else draw_view(frames.shape[0], pad, max_delta, generator, frames.device)
    if out is not None:
        if out.dtype != torch.float32 or out.shape != frames.shape:
            raise ValueError(f"augment: out must be float32 {list(frames.shape)}, got {out.dtype} {list(out.shape)}")
        return brighten_(translate(frames, offsets, pad, out=out).div_(255.0), deltas)
    return brighten_(translate(frames, offsets, pad).float().div_(255.0), deltas)
