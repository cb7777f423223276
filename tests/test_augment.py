"""Augmentations: exact integer shifts of the replicate-padded frame, bounded brightness, kept dtype and range."""

import pytest
import torch
import torch.nn.functional as F

from voidrl.intrinsic.augment import augment, draw_view, random_brightness, random_shift, shift_sequences, translate


def frames(batch=8, channels=4, size=12, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 256, (batch, channels, size, size), generator=g, dtype=torch.uint8)


def slow_crop(x, row, col, pad):
    """One sample: replicate-pad by hand (edge rows/columns repeated), then slice."""
    height, width = x.shape[-2:]
    rows = [min(max(r - pad, 0), height - 1) for r in range(row, row + height)]
    cols = [min(max(c - pad, 0), width - 1) for c in range(col, col + width)]
    return x[:, rows][:, :, cols]


def test_translate_matches_slicing_reference():
    x = frames().float() / 255
    pad = 3
    g = torch.Generator().manual_seed(1)
    offsets = torch.randint(0, 2 * pad + 1, (x.shape[0], 2), generator=g)
    shifted = translate(x, offsets, pad)
    for b, (row, col) in enumerate(offsets.tolist()):
        assert torch.equal(shifted[b], slow_crop(x[b], row, col, pad))


@pytest.mark.parametrize("dtype", [torch.uint8, torch.float32])
def test_translate_copies_unshifted_samples_and_gathers_the_rest(dtype):
    x = frames(batch=10).to(dtype)
    pad = 4
    offsets = torch.randint(0, 2 * pad + 1, (10, 2), generator=torch.Generator().manual_seed(6))
    offsets[::2] = pad  # half the samples stay in place (ATC's shift probability makes this the common case)
    for chosen in (offsets, torch.full((10, 2), pad)):
        shifted = translate(x, chosen, pad)
        assert shifted.dtype == dtype and shifted.data_ptr() != x.data_ptr()
        for b, (row, col) in enumerate(chosen.tolist()):
            assert torch.equal(shifted[b], slow_crop(x[b], row, col, pad))


def test_random_shift_is_an_exact_translation_per_sample():
    x = frames(batch=32).float() / 255
    pad = 4
    padded = F.pad(x, (pad,) * 4, mode="replicate")
    shifted = random_shift(x, pad, torch.Generator().manual_seed(2))
    height, width = x.shape[-2:]
    offsets = set()
    for b in range(x.shape[0]):
        matches = [
            (r, c)
            for r in range(2 * pad + 1)
            for c in range(2 * pad + 1)
            if torch.equal(shifted[b], padded[b, :, r : r + height, c : c + width])
        ]
        assert matches, f"sample {b} is not an integer translation"
        offsets.add(matches[0])
    assert len(offsets) > 1  # each sample draws its own shift


def test_each_replayed_sequence_shifts_by_one_offset_at_every_step():
    steps, batch, pad = 5, 12, 2
    sequences = frames(batch=steps * batch, channels=3, size=9).reshape(steps, batch, 3, 9, 9)
    shifted = shift_sequences(sequences, pad, torch.Generator().manual_seed(5))
    assert shifted.shape == sequences.shape and shifted.dtype == torch.uint8
    offsets = set()
    for b in range(batch):
        fits = [(r, c) for r in range(2 * pad + 1) for c in range(2 * pad + 1)
                if all(torch.equal(shifted[t, b], slow_crop(sequences[t, b], r, c, pad)) for t in range(steps))]
        assert fits, f"sequence {b} is not one translation at all its steps"
        offsets.add(fits[0])
    assert len(offsets) > 1  # each sequence draws its own offset
    again = shift_sequences(sequences, pad, torch.Generator().manual_seed(5))
    assert torch.equal(again, shifted)


def test_random_shift_is_reproducible_with_a_generator():
    x = frames().float() / 255
    first = random_shift(x, 4, torch.Generator().manual_seed(3))
    second = random_shift(x, 4, torch.Generator().manual_seed(3))
    assert torch.equal(first, second)


def test_zero_pad_is_identity():
    x = frames().float() / 255
    assert torch.equal(random_shift(x, pad=0), x)


def test_brightness_delta_is_bounded_and_per_sample():
    x = torch.full((64, 2, 5, 5), 0.5)
    brightened = random_brightness(x, max_delta=0.2, generator=torch.Generator().manual_seed(4))
    delta = brightened - x
    assert delta.abs().max() <= 0.2 + 1e-7
    assert torch.equal(delta, delta[:, :1, :1, :1].expand_as(delta))  # one delta per sample
    assert delta[:, 0, 0, 0].unique().numel() > 1


def test_brightness_clamps_to_unit_range():
    x = torch.tensor([0.0, 1.0]).repeat(16, 1, 1, 1)
    brightened = random_brightness(x, max_delta=0.5)
    assert brightened.min() >= 0.0 and brightened.max() <= 1.0


def test_augment_keeps_shape_dtype_and_range():
    batch = frames(size=84)
    views = augment(batch)
    assert views.shape == batch.shape
    assert views.dtype == torch.float32
    assert views.min() >= 0.0 and views.max() <= 1.0
    assert not torch.equal(augment(batch), augment(batch))


def test_augment_scales_before_brightness():
    white = torch.full((4, 1, 6, 6), 255, dtype=torch.uint8)
    views = augment(white, max_delta=0.2)
    assert views.max() <= 1.0 and views.min() >= 0.8 - 1e-6  # not clamped to near-binary values


def test_shift_works_on_uint8_and_matches_the_float_shift():
    batch = frames()
    offsets = torch.randint(0, 9, (batch.shape[0], 2), generator=torch.Generator().manual_seed(5))
    shifted = translate(batch, offsets, 4)
    assert shifted.dtype == torch.uint8
    assert torch.equal(shifted.float() / 255, translate(batch.float() / 255, offsets, 4))


@pytest.mark.parametrize("shift_probability", [0.0, 0.3, 1.0])
def test_augment_into_a_reused_buffer_gives_the_same_view(shift_probability):
    """``out=``: the same values as a fresh view, whichever samples are shifted, in a channels-last float32 buffer
    that held another batch's view before; a buffer of the wrong dtype is refused."""
    generator = torch.Generator().manual_seed(3)
    frames = torch.randint(0, 256, (16, 4, 12, 12), dtype=torch.uint8, generator=generator)
    view = draw_view(16, 4, 0.2, generator, shift_probability=shift_probability)
    buffer = torch.rand(16, 4, 12, 12, generator=generator).contiguous(memory_format=torch.channels_last)
    fresh = augment(frames, 4, view=view)
    reused = augment(frames, 4, view=view, out=buffer)
    assert reused.data_ptr() == buffer.data_ptr()
    assert torch.equal(reused, fresh)
    with pytest.raises(ValueError, match="out must be float32"):
        augment(frames, 4, view=view, out=torch.empty(16, 4, 12, 12, dtype=torch.float64))
