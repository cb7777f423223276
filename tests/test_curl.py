"""CURL's asymmetric loss, the momentum target, the collapse diagnostics and the milder augmentation."""

import math

import pytest
import torch

from voidrl.intrinsic.apt import APTConfig, APTReward
from voidrl.intrinsic.augment import draw_view
from voidrl.math.contrastive import bilinear_info_nce_loss, ema_update, effective_rank, representation_metrics

OBS = (4, 10, 10)


def slow_bilinear_info_nce(anchors, positives, weight):
    """-log softmax of q_n W k_n among q_n W k_m over every m, averaged over anchors, one scalar at a time."""
    total = 0.0
    for n in range(anchors.shape[0]):
        scores = [sum(float(anchors[n, i]) * float(weight[i, j]) * float(positives[m, j])
                      for i in range(weight.shape[0]) for j in range(weight.shape[1])) for m in range(positives.shape[0])]
        top = max(scores)
        total += -(scores[n] - top - math.log(sum(math.exp(s - top) for s in scores)))
    return total / anchors.shape[0]


@pytest.mark.parametrize("n,d", [(2, 3), (5, 4), (9, 2)])
def test_bilinear_loss_matches_slow_reference(n, d):
    g = torch.Generator().manual_seed(n * d)
    anchors, positives, weight = torch.randn(n, d, generator=g), torch.randn(n, d, generator=g), torch.randn(d, d, generator=g)
    loss, metrics = bilinear_info_nce_loss(anchors, positives, weight)
    assert loss.item() == pytest.approx(slow_bilinear_info_nce(anchors, positives, weight), rel=1e-5)
    logits = anchors @ weight @ positives.T
    assert metrics["apt/contrastive_accuracy"].item() == pytest.approx((logits.argmax(1) == torch.arange(n)).float().mean().item())


def test_bilinear_loss_hand_cases():
    # identical unrelated logits: chance, log N; a dominant diagonal: near 0 and accuracy 1
    n = 4
    loss, _ = bilinear_info_nce_loss(torch.zeros(n, 3), torch.randn(n, 3), torch.eye(3))
    assert loss.item() == pytest.approx(math.log(n))
    basis = torch.eye(n) * 10.0
    loss, metrics = bilinear_info_nce_loss(basis, basis, torch.eye(n))
    assert loss.item() < 1e-6 and metrics["apt/contrastive_accuracy"].item() == 1.0


def test_bilinear_loss_is_asymmetric():
    g = torch.Generator().manual_seed(0)
    q, k, w = torch.randn(6, 4, generator=g), torch.randn(6, 4, generator=g), torch.randn(4, 4, generator=g)
    assert not torch.isclose(bilinear_info_nce_loss(q, k, w)[0], bilinear_info_nce_loss(k, q, w)[0])


def test_ema_update_by_hand():
    target, online = [torch.tensor([0.0, 10.0]), torch.tensor([4.0])], [torch.tensor([1.0, 0.0]), torch.tensor([8.0])]
    ema_update(target, online, 0.25)
    assert torch.equal(target[0], torch.tensor([0.25, 7.5])) and torch.equal(target[1], torch.tensor([5.0]))
    assert torch.equal(online[0], torch.tensor([1.0, 0.0]))
    ema_update(target, online, 1.0)  # tau 1 copies
    assert torch.equal(target[1], online[1])
    with pytest.raises(ValueError, match="tau must be in"):
        ema_update(target, online, 0.0)


def test_effective_rank_of_known_spectra():
    assert effective_rank(torch.ones(50, 15)).item() == pytest.approx(1.0, abs=1e-4)  # collapsed: one point
    equal_directions = torch.eye(15).repeat(4, 1)  # every direction with the same singular value
    assert effective_rank(equal_directions).item() == pytest.approx(15.0, rel=1e-4)
    two = torch.zeros(10, 15)
    two[:5, 0], two[5:, 1] = 1.0, 1.0
    assert effective_rank(two).item() == pytest.approx(2.0, rel=1e-4)


def test_representation_metrics_count_dead_units():
    latents = torch.randn(64, 15, generator=torch.Generator().manual_seed(0))
    latents[:, :3] = 0.5  # three units that never vary
    metrics = representation_metrics(latents, torch.ones(64, 8) * 2.0)
    assert metrics["apt/dead_units"].item() == pytest.approx(3 / 15)
    assert metrics["apt/projection_norm"].item() == pytest.approx(2.0 * math.sqrt(8))


def test_curl_update_trains_the_online_encoder_and_moves_the_target_by_tau():
    torch.manual_seed(0)
    plugin = APTReward(APTConfig(contrastive_loss="curl", target_tau=0.05, contrastive_start=0, contrastive_batch_size=8), OBS)
    plugin.buffer.add(torch.randint(0, 256, (16, *OBS), dtype=torch.uint8))
    online_before = [p.detach().clone() for p in plugin.encoder.parameters()]
    target_before = [p.detach().clone() for p in plugin.target_encoder.parameters()]
    assert all(torch.equal(a, b) for a, b in zip(online_before, target_before))  # the target starts as a copy
    assert not any(p.requires_grad for p in plugin.target_encoder.parameters())
    metrics = plugin.contrastive_update()
    assert set(metrics) >= {"apt/contrastive_loss", "apt/contrastive_accuracy", "apt/latent_effective_rank", "apt/dead_units"}
    online_after = list(plugin.encoder.parameters())
    assert any(not torch.equal(a, b) for a, b in zip(online_before, online_after))
    for target, before, online in zip(plugin.target_encoder.parameters(), target_before, online_after):
        torch.testing.assert_close(target, 0.95 * before + 0.05 * online.detach())
    assert not torch.equal(plugin.bilinear.detach(), torch.eye(64))  # W is learned


def test_curl_state_round_trips_through_the_checkpoint_state():
    torch.manual_seed(0)
    config = APTConfig(contrastive_loss="curl", contrastive_start=0, contrastive_batch_size=8, warmup_updates=10)
    plugin = APTReward(config, OBS)
    with torch.no_grad():
        for _ in range(3):
            plugin.observe(torch.randint(0, 256, (4, *OBS), dtype=torch.uint8))
    restored = APTReward(config, OBS)
    restored.load_state_dict(plugin.state_dict())
    assert restored.updates == 3 and restored.vector_steps == 3
    assert torch.equal(restored.bilinear, plugin.bilinear)
    for a, b in zip(restored.target_encoder.state_dict().values(), plugin.target_encoder.state_dict().values()):
        assert torch.equal(a, b)
    assert plugin.parameters.optimizer.param_groups[0]["lr"] == pytest.approx(config.encoder_learning_rate * 3 / 10)  # warm-up


def test_representation_stride_stores_one_vector_step_in_k():
    plugin = APTReward(APTConfig(representation_stride=3, contrastive_start=10**9), OBS)
    with torch.no_grad():
        for _ in range(7):
            plugin.observe(torch.zeros(2, *OBS, dtype=torch.uint8))
    assert len(plugin.buffer) == 2 * 3  # steps 0, 3 and 6


def test_shift_probability_leaves_the_other_samples_in_place():
    g = torch.Generator().manual_seed(0)
    offsets, _ = draw_view(10_000, pad=4, generator=g, shift_probability=0.1)
    moved = (offsets != 4).any(1).float().mean().item()
    assert 0.08 < moved < 0.1  # 10% drawn to shift, of which 1/81 land back on (4, 4)
    offsets, _ = draw_view(100, pad=4, generator=g, shift_probability=0.0)
    assert (offsets == 4).all()
