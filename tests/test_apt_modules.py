"""APT's representation buffer, encoder and projection head."""

import pytest
import torch
from torch.nn.utils import parametrize

from voidrl.intrinsic.buffer import RepresentationBuffer
from voidrl.io.checkpoint import load_checkpoint, save_checkpoint
from voidrl.nets.encoders import APTEncoder, ProjectionHead
from tests.test_frames import synthetic_stacks


def constant_frames(values, shape=(2, 3, 3)):
    return torch.stack([torch.full(shape, v, dtype=torch.uint8) for v in values])


def sampled_values(buffer, count=200, seed=0):
    return set(buffer.sample(count, torch.Generator().manual_seed(seed))[:, 0, 0, 0].tolist())


def test_samples_only_filled_slots():
    buffer = RepresentationBuffer(10, (2, 3, 3))
    buffer.add(constant_frames([7, 8, 9]))
    assert len(buffer) == 3
    batch = buffer.sample(200, torch.Generator().manual_seed(0))
    assert batch.shape == (200, 2, 3, 3) and batch.dtype == torch.uint8
    assert sampled_values(buffer) == {7, 8, 9}
    assert all(torch.equal(frame, frame[0, 0, 0].expand_as(frame)) for frame in batch)


def test_empty_buffer_refuses_to_sample():
    with pytest.raises(ValueError):
        RepresentationBuffer(4, (1, 2, 2)).sample(1)


def test_wrong_observations_are_refused():
    buffer = RepresentationBuffer(4, (1, 2, 2))
    with pytest.raises(ValueError):
        buffer.add(torch.zeros(3, 1, 2, 2))
    with pytest.raises(ValueError):
        buffer.add(torch.zeros(3, 2, 2, dtype=torch.uint8))


def test_ring_wraps_around_keeping_the_latest():
    buffer = RepresentationBuffer(4, (2, 3, 3))
    buffer.add(constant_frames([1, 2, 3]))
    buffer.add(constant_frames([4, 5, 6]))
    assert len(buffer) == 4
    assert sampled_values(buffer) == {3, 4, 5, 6}
    buffer.add(constant_frames(range(10, 19)))  # more than the capacity at once
    assert len(buffer) == 4
    assert sampled_values(buffer) == {15, 16, 17, 18}
    buffer.add(constant_frames([20]))
    assert sampled_values(buffer) == {16, 17, 18, 20}


def test_state_dict_round_trip_through_checkpoint(tmp_path):
    buffer = RepresentationBuffer(5, (2, 3, 3))
    buffer.add(constant_frames([1, 2, 3]))
    save_checkpoint(tmp_path / "buffer.pt", {"buffer": buffer.state_dict()})
    assert buffer.state_dict()["staging"].shape[:2] == (1, 3)  # unfilled slots are not written

    restored = RepresentationBuffer(5, (2, 3, 3))
    restored.load_state_dict(load_checkpoint(tmp_path / "buffer.pt")["buffer"])
    assert len(restored) == 3
    def same_samples(seed):
        return torch.equal(*(b.sample(50, torch.Generator().manual_seed(seed)) for b in (restored, buffer)))

    assert same_samples(1)
    for buf in (buffer, restored):  # and both go on writing at the same slot
        buf.add(constant_frames([4, 5, 6]))
    assert same_samples(2)
    assert sampled_values(restored) == {2, 3, 4, 5, 6}

    with pytest.raises(ValueError):
        RepresentationBuffer(6, (2, 3, 3)).load_state_dict(buffer.state_dict())


def test_frame_stacks_come_back_exactly_from_compact_blocks():
    obs = synthetic_stacks(T=100, N=3, breaks=((0, 40), (2, 41), (1, 77), (1, 78)))
    buffer = RepresentationBuffer(50, (4, 5, 5), block_steps=8)
    for step in obs:
        buffer.add(step)
    assert len(buffer) == 50 and len(buffer.blocks) > 1
    newest = obs.reshape(-1, 4, 5, 5)[-50:]
    batch = buffer.sample(3000, torch.Generator().manual_seed(0))
    matches = (batch.unsqueeze(1) == newest.unsqueeze(0)).flatten(2).all(-1)  # [3000, 50]
    assert matches.any(1).all()  # every draw is one of the newest 50 stacks, rebuilt exactly
    assert matches.any(0).all()  # and each of them is drawn


def test_thesis_buffer_keeps_one_frame_per_state():
    # 10,000 Atari stacks from 16 envs: 282 MB as stacks (the thesis's float32 copy: 1.1 GB)
    steps, envs = 625, 16
    frames = torch.randint(0, 256, (steps + 3, envs, 84, 84), dtype=torch.uint8)
    buffer = RepresentationBuffer(10_000, (4, 84, 84))
    for t in range(steps):
        buffer.add(frames[t : t + 4].transpose(0, 1))
    assert len(buffer) == 10_000
    assert buffer.nbytes < 0.35 * 282_240_000
    newest = buffer.sample(64, torch.Generator().manual_seed(0))
    assert newest.shape == (64, 4, 84, 84) and newest.dtype == torch.uint8


@pytest.mark.parametrize("obs_shape", [(4, 84, 84), (10, 10, 10), (4, 10, 10)])
def test_encoder_output(obs_shape):
    encoder = APTEncoder(obs_shape)
    latent = encoder(torch.rand(3, *obs_shape))
    assert latent.shape == (3, 15)
    assert latent.abs().max() <= 1.0


def test_encoder_layout_and_spectral_norm():
    atari = APTEncoder((4, 84, 84))
    small = APTEncoder((10, 10, 10))
    atari_convs = [m for m in atari.modules() if isinstance(m, torch.nn.Conv2d)]
    small_convs = [m for m in small.modules() if isinstance(m, torch.nn.Conv2d)]
    assert [(c.out_channels, c.kernel_size, c.stride) for c in atari_convs] == [
        (32, (8, 8), (4, 4)),
        (64, (4, 4), (2, 2)),
        (64, (3, 3), (1, 1)),
    ]
    assert atari.head[0].in_features == 3136
    assert [(c.out_channels, c.kernel_size) for c in small_convs] == [(32, (3, 3)), (32, (3, 3))]
    for conv in atari_convs + small_convs:
        assert parametrize.is_parametrized(conv, "weight")
        assert type(conv.parametrizations.weight[0]).__name__ == "_SpectralNorm"


def test_encoder_refuses_raw_frames():
    with pytest.raises(TypeError):
        APTEncoder((4, 10, 10))(torch.zeros(1, 4, 10, 10, dtype=torch.uint8))


def test_gradient_reaches_encoder_through_projection_head():
    encoder, head = APTEncoder((4, 10, 10)), ProjectionHead()
    projection = head(encoder(torch.rand(5, 4, 10, 10)))
    assert projection.shape == (5, 64)
    projection.pow(2).sum().backward()
    for name, param in list(encoder.named_parameters()) + list(head.named_parameters()):
        assert param.grad is not None and param.grad.abs().sum() > 0, name


def step_frames(step, num_envs, shape=(2, 3, 3)):
    """One vector step whose environment e's frame is filled with 10 * step + e."""
    return constant_frames([10 * step + env for env in range(num_envs)], shape)


def test_sampled_transitions_pair_an_environments_consecutive_observations_and_skip_new_episodes():
    buffer = RepresentationBuffer(100, (2, 3, 3), block_steps=2)  # pairs across sealed blocks and the staging block
    buffer.add(step_frames(0, 2))  # no predecessor: arrivals -1
    buffer.add(step_frames(1, 2), torch.tensor([3, -1]))  # env 1 began a new episode
    buffer.add(step_frames(2, 2), torch.tensor([4, 5]))
    assert torch.equal(buffer.latest(), step_frames(2, 2))
    before, actions, after = buffer.sample_transitions(300, torch.Generator().manual_seed(0))
    pairs = set(zip(before[:, 0, 0, 0].tolist(), actions.tolist(), after[:, 0, 0, 0].tolist()))
    assert pairs == {(0, 3, 10), (10, 4, 20), (11, 5, 21)}  # by hand: never into env 1's step 1, never from nothing


def test_transitions_come_from_the_newest_observations_with_their_predecessor_held():
    buffer = RepresentationBuffer(4, (2, 3, 3), block_steps=1)
    assert buffer.sample_transitions(1) is None and buffer.latest() is None
    for step in range(6):
        buffer.add(step_frames(step, 2), None if step == 0 else torch.tensor([step, 7]))
    before, actions, after = buffer.sample_transitions(300, torch.Generator().manual_seed(0))
    pairs = set(zip(before[:, 0, 0, 0].tolist(), actions.tolist(), after[:, 0, 0, 0].tolist()))
    # the newest 4 observations are steps 4 and 5, and step 3 was dropped with its block: step 4 has no pair
    assert pairs == {(40, 5, 50), (41, 7, 51)}


def test_another_number_of_environments_forgets_every_pair():
    buffer = RepresentationBuffer(100, (2, 3, 3))
    buffer.add(step_frames(0, 2))
    buffer.add(step_frames(1, 2), torch.tensor([1, 2]))
    buffer.add(step_frames(2, 3), torch.tensor([1, 2, 3]))  # an index N back would cross environments now
    assert buffer.sample_transitions(4) is None
    buffer.add(step_frames(3, 3), torch.tensor([4, 5, 6]))
    _, actions, after = buffer.sample_transitions(100, torch.Generator().manual_seed(0))
    assert set(actions.tolist()) == {4, 5, 6} and set(after[:, 0, 0, 0].tolist()) == {30, 31, 32}


def test_arrivals_survive_a_checkpoint_and_an_older_state_holds_no_pairs(tmp_path):
    buffer = RepresentationBuffer(100, (2, 3, 3), block_steps=2)
    for step in range(3):
        buffer.add(step_frames(step, 2), torch.tensor([step, step + 10]))
    save_checkpoint(tmp_path / "buffer.pt", {"buffer": buffer.state_dict()})
    state = load_checkpoint(tmp_path / "buffer.pt")["buffer"]
    restored = RepresentationBuffer(100, (2, 3, 3), block_steps=2)
    restored.load_state_dict(state)
    generator = lambda: torch.Generator().manual_seed(3)  # noqa: E731
    for original, copy in zip(buffer.sample_transitions(50, generator()), restored.sample_transitions(50, generator())):
        assert torch.equal(original, copy)
    restored.add(step_frames(3, 2), torch.tensor([8, 9]))  # the restored staging block goes on filling
    before, actions, after = restored.sample_transitions(300, generator())
    assert (20, 8, 30) in set(zip(before[:, 0, 0, 0].tolist(), actions.tolist(), after[:, 0, 0, 0].tolist()))
    older = {name: value for name, value in state.items() if "arrivals" not in name}
    old = RepresentationBuffer(100, (2, 3, 3), block_steps=2)
    old.load_state_dict(older)
    assert old.sample_transitions(4) is None and len(old) == 6
