"""The representation probes: the ridge probe's R^2 against numpy's least squares and hand cases, the masked error
on a hand-made picture."""

import numpy as np
import pytest
import torch

from voidrl.math.probes import linear_probe_r2, masked_mean_squared_error


def test_a_linear_target_is_recovered_and_noise_is_not():
    generator = torch.Generator().manual_seed(0)
    inputs = torch.randn(400, 5, generator=generator)
    targets = torch.stack([inputs @ torch.tensor([1.0, -2.0, 0.5, 0.0, 3.0]) + 4.0,  # linear in the inputs
                           torch.randn(400, generator=generator)], 1)  # independent of them
    r2 = linear_probe_r2(inputs[:300], targets[:300], inputs[300:], targets[300:], ridge=0.0)
    assert r2[0].item() == pytest.approx(1.0, abs=1e-9)
    assert -0.1 < r2[1].item() < 0.05


def test_the_ridge_probe_matches_a_least_squares_reference():
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(200, 4)) * [1.0, 10.0, 0.1, 3.0] + 5.0, rng.normal(size=(200, 2))
    y[:, 0] += x @ [0.3, 0.02, -4.0, 0.0]
    r2 = linear_probe_r2(torch.tensor(x[:150]), torch.tensor(y[:150]), torch.tensor(x[150:]), torch.tensor(y[150:]), ridge=0.0)
    design = np.hstack([x[:150], np.ones((150, 1))])  # unscaled: standardising the inputs does not change an unpenalised fit
    weights = np.linalg.lstsq(design, y[:150], rcond=None)[0]
    residual = y[150:] - np.hstack([x[150:], np.ones((50, 1))]) @ weights
    reference = 1.0 - (residual ** 2).sum(0) / ((y[150:] - y[150:].mean(0)) ** 2).sum(0)
    assert np.allclose(r2.numpy(), reference, atol=1e-9)
    shrunk = linear_probe_r2(torch.tensor(x[:150]), torch.tensor(y[:150]), torch.tensor(x[150:]), torch.tensor(y[150:]), ridge=10.0)
    assert shrunk[0] < r2[0]  # a heavy penalty pulls the fit towards the mean


def test_the_masked_error_counts_only_the_masked_pixels():
    frames = torch.full((5, 3, 4, 4), 100, dtype=torch.uint8)
    mask = torch.zeros(5, 4, 4, dtype=torch.bool)
    mask[:, 2, 1] = True  # one "body" pixel per frame
    reconstructions = frames.float() / 255.0
    reconstructions[:, :, 0, 3] = 0.0  # wrong off the body only
    assert masked_mean_squared_error(frames, reconstructions, mask) == 0.0
    reconstructions[0, 0, 2, 1] = 0.0  # one channel wrong on frame 0's body pixel
    expected = (100 / 255.0) ** 2 / 3 / 5  # one channel of three, one body pixel of five
    assert masked_mean_squared_error(frames, reconstructions, mask) == pytest.approx(expected)
