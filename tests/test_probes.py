"""The representation probes: the ridge probe's R^2 against numpy's least squares and hand cases, the k-nearest-
neighbour probe against a loop over the held-out points and on a target no linear map reads, the masked error on a
hand-made picture."""

import numpy as np
import pytest
import torch

from voidrl.math.probes import knn_probe_r2, linear_probe_r2, masked_mean_squared_error


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


def test_the_neighbour_probe_reads_a_target_the_linear_probe_cannot():
    generator = torch.Generator().manual_seed(0)
    inputs = torch.rand(2000, 2, generator=generator) * 2 - 1
    targets = torch.stack([(3 * inputs[:, 0]).cos(),  # even in the input: no linear map reads it
                           inputs[:, 1],  # linear
                           torch.randn(2000, generator=generator)], 1)  # noise
    split = (inputs[:1500], targets[:1500], inputs[1500:], targets[1500:])
    neighbour, linear = knn_probe_r2(*split, k=10), linear_probe_r2(*split)
    assert neighbour[0] > 0.95 and linear[0] < 0.05
    assert neighbour[1] > 0.98 and linear[1] > 0.99
    assert neighbour[2] < 0.0  # a mean of 10 draws of noise predicts worse than the held-out mean


def test_the_neighbour_probe_matches_a_loop_over_the_held_out_points():
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=(120, 3)) * [1.0, 20.0, 0.5], rng.normal(size=(120, 2))
    train_x, train_y, test_x, test_y = x[:90], y[:90], x[90:], y[90:]
    scaled = (x - train_x.mean(0)) / train_x.std(0, ddof=1)  # torch's std is the sample one
    predictions = []
    for point in scaled[90:]:
        nearest = sorted(range(90), key=lambda i: np.linalg.norm(scaled[i] - point))[:4]
        predictions.append(train_y[nearest].mean(0))
    reference = 1.0 - ((test_y - np.array(predictions)) ** 2).sum(0) / ((test_y - test_y.mean(0)) ** 2).sum(0)
    r2 = knn_probe_r2(*(torch.tensor(a) for a in (train_x, train_y, test_x, test_y)), k=4)
    assert np.allclose(r2.numpy(), reference, atol=1e-9)
    exact = knn_probe_r2(torch.tensor([[0.0], [1.0], [5.0]]), torch.tensor([[2.0], [4.0], [9.0]]),
                         torch.tensor([[0.1], [4.0]]), torch.tensor([[2.0], [9.0]]), k=1)
    assert exact.item() == pytest.approx(1.0)  # each held-out point's one neighbour carries its target
    with pytest.raises(ValueError, match="k must lie in"):
        knn_probe_r2(torch.zeros(3, 1), torch.zeros(3, 1), torch.zeros(2, 1), torch.zeros(2, 1), k=4)


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
