"""The replay beside the checkpoint (``--save-replay``): each checkpoint writes only what arrived since the last,
a reload rebuilds the replay exactly, overwritten segments go, a segment without its checkpoint is ignored."""

import gymnasium as gym
import numpy as np
import pytest
import torch

from tests.test_replay import frame_stack_sequences
from voidrl.io.checkpoint import CheckpointError
from voidrl.replay import SequenceReplay
from voidrl.replay.store import ReplayStore, observation_bytes_per_sequence


def assert_same_replay(loaded: SequenceReplay, original: SequenceReplay) -> None:
    """The same index, and the same sequences sampled by the same RNG."""
    assert loaded.added == original.added and loaded.max_priority == original.max_priority
    np.testing.assert_array_equal(loaded.insertions, original.insertions)
    np.testing.assert_array_equal(loaded.tree.priorities(np.arange(loaded.capacity)), original.tree.priorities(np.arange(original.capacity)))
    a, b = loaded.sample(8), original.sample(8)
    assert torch.equal(a.keys, b.keys) and torch.equal(a.obs, b.obs) and torch.equal(a.rewards, b.rewards)
    assert torch.equal(a.start_state[0], b.start_state[0])


def segment_ranges(store: ReplayStore) -> list[tuple[int, int]]:
    return [(first, end) for first, end, _ in store.segments()]


def test_each_checkpoint_writes_only_the_new_sequences_and_a_reload_is_exact(tmp_path):
    sequences = frame_stack_sequences(12)
    replay, store = SequenceReplay(capacity=8, seed=1), ReplayStore(tmp_path, 1, 8)
    replay.add(sequences[:3])
    store.save(replay)
    replay.add(sequences[3:5])
    replay.update_priorities(torch.tensor([[0, 1], [4, 1]]), np.array([7.0, 0.3]))
    state = store.save(replay)
    assert segment_ranges(store) == [(0, 3), (3, 5)]
    assert "items" not in state and "obs" not in state["index"]  # the checkpoint keeps the index alone

    loaded = SequenceReplay(capacity=8, seed=99)
    ReplayStore(tmp_path, 1, 8).load(loaded, state)
    assert_same_replay(loaded, replay)


def test_overwritten_segments_go_one_checkpoint_later_and_the_ring_reloads(tmp_path):
    sequences = frame_stack_sequences(20)
    replay, store = SequenceReplay(capacity=6), ReplayStore(tmp_path, 1, 6)
    saved = []
    for start in range(0, 20, 4):  # a checkpoint every 4 insertions into a ring of 6
        replay.add(sequences[start:start + 4])
        saved.append(store.save(replay))
    # The last checkpoint (20 insertions) needs 14..19; the one before (16) needed 10..15, so segment 8-12 stays.
    assert segment_ranges(store) == [(8, 12), (12, 16), (16, 20)]
    loaded = SequenceReplay(capacity=6)
    ReplayStore(tmp_path, 1, 6).load(loaded, saved[-1])
    assert_same_replay(loaded, replay)
    assert [torch.equal(loaded.obs[n % 6].gather(torch.arange(9)), sequences[n].obs) for n in range(14, 20)] == [True] * 6


def test_a_segment_written_without_its_checkpoint_is_ignored_then_removed(tmp_path):
    sequences = frame_stack_sequences(8)
    replay, store = SequenceReplay(capacity=8), ReplayStore(tmp_path, 1, 8)
    replay.add(sequences[:3])
    on_disk = store.save(replay)
    before_kill = SequenceReplay(capacity=8)
    before_kill.load_state_dict(replay.state_dict())
    replay.add(sequences[3:6])
    store.save(replay)  # the run is killed here: a segment 3-6 exists, the checkpoint still says 3

    resumed, resumed_store = SequenceReplay(capacity=8), ReplayStore(tmp_path, 1, 8)
    resumed_store.load(resumed, on_disk)
    assert_same_replay(resumed, before_kill)
    resumed.add(sequences[6:8])  # the resumed run acts anew: different sequences take numbers 3-4
    (tmp_path / ".000000000003-000000000005.pt.abcd.tmp").write_bytes(b"cut off")
    resumed_store.save(resumed)
    assert segment_ranges(resumed_store) == [(0, 3), (3, 5)] and not list(tmp_path.glob("*.tmp"))


def test_missing_segments_are_refused_in_one_line(tmp_path):
    replay, store = SequenceReplay(capacity=8), ReplayStore(tmp_path, 1, 8)
    replay.add(frame_stack_sequences(4))
    state = store.save(replay)
    next(tmp_path.glob("*.pt")).unlink()
    with pytest.raises(CheckpointError, match="4 of them are missing"):
        ReplayStore(tmp_path, 1, 8).load(SequenceReplay(capacity=8), state)


def test_the_expected_size_counts_one_new_frame_a_step_for_frame_stacks():
    atari = gym.spaces.Box(0, 255, (4, 84, 84), np.uint8)
    assert observation_bytes_per_sequence(atari, 80) == 84 * 84 * 85
    line = ReplayStore("run/replay", observation_bytes_per_sequence(atari, 80), 4000).describe()
    assert "4,000 sequences" in line and "600 kB" in line and "2.4 GB when full" in line
    vector = gym.spaces.Box(-1, 1, (4,), np.float32)
    assert observation_bytes_per_sequence(vector, 80) == 81 * 4 * 4
    sequences = frame_stack_sequences(1, length=8, depth=4)
    replay = SequenceReplay(capacity=1)
    replay.add(sequences)
    stored = sum(t.numel() for t in replay.obs[0].state_dict().values() if t.dtype == torch.uint8)
    assert stored == observation_bytes_per_sequence(gym.spaces.Box(0, 255, (4, 6, 5), np.uint8), 8)
