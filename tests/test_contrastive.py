"""NT-Xent against a slow per-view reference, hand-checkable cases and pair-indexing invariants."""

import math

import pytest
import torch

from voidrl.math.contrastive import nt_xent_loss


def slow_nt_xent(z1, z2, temperature):
    """SimCLR's loss written out: for each of the 2N views, its positive is the view N away."""
    views = torch.cat([z1, z2]).double()
    count = views.shape[0]

    def sim(a, b):
        return float(a @ b) / (float(a.norm()) * float(b.norm()))

    total = 0.0
    for i in range(count):
        positive = (i + count // 2) % count
        denominator = sum(math.exp(sim(views[i], views[k]) / temperature) for k in range(count) if k != i)
        total += -math.log(math.exp(sim(views[i], views[positive]) / temperature) / denominator)
    return total / count


@pytest.mark.parametrize("n", [2, 3, 8, 17])
@pytest.mark.parametrize("temperature", [0.1, 0.5, 1.0])
def test_matches_slow_reference(n, temperature):
    g = torch.Generator().manual_seed(n)
    z1, z2 = torch.randn(n, 6, generator=g), torch.randn(n, 6, generator=g)
    loss, metrics = nt_xent_loss(z1, z2, temperature)
    assert loss.item() == pytest.approx(slow_nt_xent(z1, z2, temperature), rel=1e-5)
    assert metrics["apt/contrastive_loss"] == loss.detach()
    assert not metrics["apt/contrastive_loss"].requires_grad


def test_two_views_only_give_zero_loss():
    # the only other view is the positive, whatever the embeddings
    g = torch.Generator().manual_seed(0)
    z1 = torch.randn(1, 4, generator=g, requires_grad=True)
    loss, metrics = nt_xent_loss(z1, torch.randn(1, 4, generator=g))
    assert loss.item() == pytest.approx(0.0, abs=1e-7)
    assert metrics["apt/contrastive_accuracy"] == 1.0
    loss.backward()
    assert torch.isfinite(z1.grad).all()


def test_identical_views_of_orthogonal_samples():
    # each view: positive similarity 1, the other 2N - 2 views similarity 0
    n, tau = 3, 0.5
    z = torch.eye(n, dtype=torch.float64) * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)[:, None]
    # (cosine similarity ignores the scale)
    loss, metrics = nt_xent_loss(z, z.clone(), tau)
    expected = -math.log(math.exp(1 / tau) / (math.exp(1 / tau) + 2 * n - 2))
    assert loss.item() == pytest.approx(expected, rel=1e-6)
    assert metrics["apt/contrastive_accuracy"] == 1.0


def test_all_views_identical_is_chance():
    n = 5
    z = torch.ones(n, 3)
    loss, _ = nt_xent_loss(z, z, temperature=0.1)
    assert loss.item() == pytest.approx(math.log(2 * n - 1), rel=1e-6)


def test_positive_pairs_follow_rows():
    g = torch.Generator().manual_seed(1)
    z1 = torch.randn(6, 8, generator=g, dtype=torch.float64)
    z2 = z1 + 0.05 * torch.randn(6, 8, generator=g, dtype=torch.float64)
    loss, metrics = nt_xent_loss(z1, z2)
    assert metrics["apt/contrastive_accuracy"] == 1.0

    swapped = z2[[1, 0, 2, 3, 4, 5]]
    swapped_loss, swapped_metrics = nt_xent_loss(z1, swapped)
    assert swapped_loss.item() > loss.item() + 1.0
    assert swapped_metrics["apt/contrastive_accuracy"] == pytest.approx(8 / 12)

    perm = torch.randperm(6, generator=g)
    permuted_loss, _ = nt_xent_loss(z1[perm], z2[perm])
    assert permuted_loss.item() == pytest.approx(loss.item(), rel=1e-9)
    reversed_loss, _ = nt_xent_loss(z2, z1)
    assert reversed_loss.item() == pytest.approx(loss.item(), rel=1e-9)
