"""Prioritised sequence replay: exact storage, sampling by priority^alpha, stale updates, resume."""

import io

import numpy as np
import pytest
import torch
from scipy import stats

from voidrl.replay import SequenceReplay, SequenceWriter


def frame_stack_sequences(count, length=8, depth=4, seed=0):
    """``count`` sequences cut from one env's episode of 4-frame uint8 stacks (one chain of frames)."""
    g = torch.Generator().manual_seed(seed)
    steps = count * length
    frames = torch.randint(0, 256, (steps + depth, 6, 5), generator=g, dtype=torch.uint8)
    writer = SequenceWriter(1, length=length, period=length)
    out = []
    for t in range(steps):
        obs, next_obs = frames[t : t + depth].unsqueeze(0), frames[t + 1 : t + 1 + depth].unsqueeze(0)
        flag = torch.zeros(1, dtype=torch.bool)
        states = (torch.full((1, 3), float(t)),)
        out += writer.add(obs, torch.tensor([t % 5]), torch.tensor([float(t)]), flag, flag, next_obs, states, torch.tensor([0.5]))
    return out


def test_samples_rebuild_the_stored_sequences_exactly():
    sequences = frame_stack_sequences(5)
    replay = SequenceReplay(capacity=10)
    replay.add(sequences)
    batch = replay.sample(16)
    assert batch.obs.shape == (9, 16, 4, 6, 5) and batch.obs.dtype == torch.uint8
    assert batch.actions.shape == (8, 16) and batch.start_state[0].shape == (16, 3)
    for column, slot in enumerate(batch.keys[:, 0].tolist()):
        original = sequences[slot]
        assert torch.equal(batch.obs[:, column], original.obs)
        assert torch.equal(batch.rewards[:, column], original.rewards)
        assert torch.equal(batch.start_state[0][column], original.start_state[0])
        assert bool(batch.starts_episode[column]) == original.starts_episode
    stored = sum(sum(t.numel() for t in replay.obs[slot].state_dict().values() if t.dtype == torch.uint8) for slot in range(5))
    assert stored < 0.4 * sum(s.obs.numel() for s in sequences)  # one new frame per step, not four


@pytest.mark.parametrize("seed", range(3))
def test_sampling_follows_priority_to_the_power_alpha(seed):
    replay = SequenceReplay(capacity=6, priority_exponent=0.7, seed=seed)
    replay.add(frame_stack_sequences(6, length=2))
    priorities = np.array([0.1, 1.0, 2.0, 4.0, 0.5, 3.0])
    replay.update_priorities(torch.tensor([[slot, 1] for slot in range(6)]), priorities)
    counts = np.bincount(np.concatenate([replay.sample(64).keys[:, 0].numpy() for _ in range(100)]), minlength=6)
    expected = priorities**0.7 / (priorities**0.7).sum() * counts.sum()
    assert stats.chisquare(counts, expected).pvalue > 1e-3


def test_importance_weights_of_a_sampled_batch():
    replay = SequenceReplay(capacity=2, priority_exponent=1.0, importance_exponent=1.0)
    replay.add(frame_stack_sequences(2, length=2), priorities=np.array([1.0, 3.0]))
    batch = replay.sample(64)
    probability = np.where(batch.keys[:, 0].numpy() == 0, 0.25, 0.75)
    expected = (2 * probability) ** -1.0
    np.testing.assert_allclose(batch.weights.numpy(), expected / expected.max(), rtol=1e-6)


def test_new_sequences_get_the_largest_priority_seen():
    replay = SequenceReplay(capacity=4, priority_exponent=1.0)
    sequences = frame_stack_sequences(3, length=2)
    replay.add(sequences[:2])
    replay.update_priorities(torch.tensor([[0, 1], [1, 1]]), np.array([5.0, 0.2]))
    replay.add(sequences[2:])
    np.testing.assert_allclose(replay.tree.priorities(np.arange(3)), [5.0, 0.2, 5.0])


def test_an_update_for_an_overwritten_sequence_is_ignored():
    replay = SequenceReplay(capacity=2, priority_exponent=1.0)
    sequences = frame_stack_sequences(4, length=2)
    replay.add(sequences[:2])
    keys = replay.sample(4).keys
    replay.add(sequences[2:3])  # overwrites slot 0
    assert len(replay) == 2
    replay.update_priorities(keys, np.full(4, 9.0))
    priorities = replay.tree.priorities(np.arange(2))
    assert priorities[0] == 1.0  # the new sequence in slot 0 keeps its own priority
    assert priorities[1] == (9.0 if 1 in keys[:, 0].tolist() else 1.0)


def test_state_round_trip_through_a_safe_load_gives_the_same_samples():
    replay = SequenceReplay(capacity=4, seed=3)
    replay.add(frame_stack_sequences(6, length=3))  # wraps around the ring
    replay.update_priorities(replay.sample(4).keys, np.array([0.3, 2.0, 1.0, 0.7]))
    buffer = io.BytesIO()
    torch.save(replay.state_dict(), buffer)
    buffer.seek(0)
    restored = SequenceReplay(capacity=4)
    restored.load_state_dict(torch.load(buffer, weights_only=True))
    first, second = replay.sample(8), restored.sample(8)
    assert torch.equal(first.keys, second.keys) and torch.equal(first.obs, second.obs)
    torch.testing.assert_close(first.weights, second.weights)
    with pytest.raises(ValueError, match="capacity 4, this replay 5"):
        SequenceReplay(capacity=5).load_state_dict(replay.state_dict())


def test_a_replay_saved_before_guided_steps_were_kept_loads_them_as_unguided():
    replay = SequenceReplay(capacity=4, seed=3)
    replay.add(frame_stack_sequences(3, length=3))
    state = replay.state_dict()
    state["items"] = [{name: value for name, value in item.items() if name != "guided"} for item in state["items"]]
    restored = SequenceReplay(capacity=4, seed=3)
    restored.load_state_dict(state)
    batch = restored.sample(4)
    assert batch.guided.shape == batch.mask.shape and not batch.guided.any()
    assert torch.equal(batch.obs, replay.sample(4).obs)


def test_sampling_an_empty_replay_is_an_error():
    with pytest.raises(ValueError, match="the replay is empty"):
        SequenceReplay(capacity=3).sample(2)


def test_the_rate_limiter_gives_the_batches_insertions_earned_and_says_when_none_is_left():
    from voidrl.replay.rate_limiter import SamplesPerInsert

    replay = SequenceReplay(32, limiter=SamplesPerInsert(samples_per_insert=3.0, batch_size=4, min_size=4))
    replay.add(frame_stack_sequences(3))  # below min_size: nothing earned
    assert replay.sample_due() is None and replay.due_credit() == 0.0
    replay.add(frame_stack_sequences(3, seed=1))  # 6 stored, 3 x 3 / 4 = 2.25 batches earned
    first, more = replay.sample_due()
    assert len(first.weights) == 4 and more
    second, more = replay.sample_due()
    assert not more and replay.due_credit() == pytest.approx(0.25)
    assert replay.sample_due() is None


def test_the_dataset_hands_over_each_batch_the_replay_allows_and_asks_it_no_more_than_it_must():
    from voidrl.replay.dataset import ReplayDataset
    from voidrl.replay.rate_limiter import SamplesPerInsert

    replays = [SequenceReplay(32, limiter=SamplesPerInsert(samples_per_insert=3.0, batch_size=4, min_size=4)) for _ in range(2)]
    replay, twin = replays
    asked = []
    sample_due = replay.sample_due
    replay.sample_due = lambda: asked.append(True) or sample_due()
    dataset = ReplayDataset(replay)
    assert not dataset.ready() and len(asked) == 1  # empty: nothing earned
    for each in replays:
        each.add(frame_stack_sequences(3))
        each.add(frame_stack_sequences(3, seed=1))  # 2.25 batches earned
    batches = []
    while dataset.ready():
        batches.append(next(dataset))
    assert len(batches) == 2 and len(asked) == 3  # the second batch came with "no more": not asked again
    assert [batch.keys.tolist() for batch in batches] == [twin.sample(4).keys.tolist() for _ in range(2)]
    with pytest.raises(RuntimeError, match="no batch is due"):
        next(dataset)
    assert len(asked) == 4


def test_a_hosted_replay_calls_each_method_of_the_replay_it_stands_for():
    from types import SimpleNamespace

    from voidrl.distributed.engine import HostedReplay
    from voidrl.replay.rate_limiter import SamplesPerInsert

    replay = SequenceReplay(32, limiter=SamplesPerInsert(samples_per_insert=3.0, batch_size=4, min_size=4))
    server = SimpleNamespace(call=SimpleNamespace(remote=lambda name, *args: getattr(replay, name)(*args)))
    hosted = HostedReplay(server, SimpleNamespace(get=lambda answer: answer))  # Ray's calls, made at once in this process
    hosted.add(frame_stack_sequences(6))
    assert len(hosted) == len(replay) == 6 and hosted.due_credit() == replay.due_credit() == pytest.approx(4.5)
    batch, more = hosted.sample_due()
    hosted.update_priorities(batch.keys, np.full(4, 7.0))
    assert more and replay.max_priority == 7.0 and hosted.sample(2).keys.shape == (2, 2)
    hosted.set_due_credit(0.5)
    assert replay.due_credit() == 0.5 and hosted.snapshot(2)["first"] == 2
    copy = SequenceReplay(32)
    copy.load_state_dict(hosted.state_dict())
    hosted.load_state_dict(copy.state_dict())
    assert len(copy) == 6 and copy.added == replay.added
