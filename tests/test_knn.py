"""k-NN particle distances against a brute-force loop; the APT reward and its running normaliser."""

import math

import numpy as np
import pytest
import torch

from voidrl.math import RunningMeanStd
from voidrl.math.knn import knn_distances, knn_mean_distance, particle_reward


def slow_knn_mean_distance(z, k):
    """Every pair's distance in python floats; skip the particle itself, keep its duplicates."""
    points = z.double().tolist()
    k = min(k, len(points) - 1)
    out = []
    for i, p in enumerate(points):
        distances = sorted(math.dist(p, q) for j, q in enumerate(points) if j != i)
        out.append(sum(distances[:k]) / k if k else 0.0)
    return torch.tensor(out, dtype=torch.float64)


def particles(batch, dim=15, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.tanh(torch.randn(batch, dim, generator=g))


@pytest.mark.parametrize("batch,k", [(2, 1), (7, 3), (40, 5), (64, 12)])
def test_matches_brute_force(batch, k):
    z = particles(batch, seed=batch)
    expected = slow_knn_mean_distance(z, k)
    assert torch.allclose(knn_mean_distance(z, k).double(), expected, atol=1e-5)


def test_duplicates_are_neighbours_but_self_is_not():
    z = particles(20, seed=3)
    z[5] = z[11]
    z[6] = z[11]
    distances = knn_mean_distance(z, k=2)
    assert distances[11].item() == pytest.approx(0.0, abs=1e-6)  # its two duplicates
    assert distances[0] > 0  # no particle counts itself
    assert torch.allclose(distances.double(), slow_knn_mean_distance(z, 2), atol=1e-5)


def test_all_particles_identical():
    z = torch.full((9, 4), 0.3)
    assert torch.equal(knn_mean_distance(z, k=5), torch.zeros(9))


def test_k_larger_than_batch_uses_all_others():
    z = particles(6, seed=4)
    assert torch.allclose(knn_mean_distance(z, k=50), knn_mean_distance(z, k=5))
    assert torch.allclose(knn_mean_distance(z, k=50).double(), slow_knn_mean_distance(z, 5), atol=1e-5)


def test_single_particle_gets_zero():
    assert torch.equal(knn_mean_distance(torch.randn(1, 15), k=5), torch.zeros(1))


def test_k_must_be_positive():
    with pytest.raises(ValueError):
        knn_mean_distance(torch.randn(4, 3), k=0)


def test_chunking_does_not_change_the_result():
    z = particles(50, seed=5)
    z[7] = z[30]  # a duplicate in another chunk
    assert torch.allclose(knn_mean_distance(z, 5, chunk_size=3), knn_mean_distance(z, 5, chunk_size=4096), atol=1e-6)


def test_particle_reward():
    distances = torch.tensor([0.0, 0.5, 2.0])
    reward = particle_reward(distances, running_mean=torch.tensor(0.5, dtype=torch.float64))
    assert torch.allclose(reward, torch.tensor([0.0, math.log(2.0), math.log(5.0)]))
    assert reward.dtype == torch.float32
    assert torch.allclose(particle_reward(distances, 2.0, c=3.0), torch.log(3.0 + distances / 2.0))


def test_running_mean_of_knn_distances():
    stats = RunningMeanStd()
    batches = [knn_mean_distance(particles(b, seed=b), 5) for b in (16, 33, 8, 64)]
    for batch in batches:
        stats.update(batch)
    everything = torch.cat(batches).double().numpy()
    assert stats.mean.item() == pytest.approx(np.mean(everything), rel=1e-10)
    assert stats.var.item() == pytest.approx(np.var(everything), rel=1e-10)
    assert stats.count.item() == everything.size


def test_knn_distances_are_each_particles_nearest_others_in_order():
    z = particles(30, seed=6)
    z[4] = z[9]
    distances = knn_distances(z, 4)
    assert distances.shape == (30, 4)
    for i in range(30):
        expected = sorted(math.dist(z[i].double().tolist(), z[j].double().tolist()) for j in range(30) if j != i)[:4]
        assert torch.allclose(distances[i].double(), torch.tensor(expected, dtype=torch.float64), atol=1e-5)
    assert torch.equal(knn_distances(torch.randn(1, 3), 5), torch.zeros(1, 1))


def test_clipped_particle_reward_by_hand():
    # running mean 2: normalised distances [0.5, 1, 3] and [0, 4, 4]; clip 1 -> [0, 0, 2] and [0, 3, 3]
    distances = torch.tensor([[1.0, 2.0, 6.0], [0.0, 8.0, 8.0]])
    reward = particle_reward(distances, 2.0, c=1.0, clip=1.0)
    assert torch.allclose(reward, torch.tensor([math.log(1 + 2 / 3), math.log(1 + 2.0)]))
    # no clip: the mean of the normalised distances, as from their means
    assert torch.allclose(particle_reward(distances, 2.0), particle_reward(distances.mean(1), 2.0))
