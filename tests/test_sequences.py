"""R2D2's sequence cutting: overlapping windows inside episodes, closed and masked at episode ends."""

import pytest
import torch

from voidrl.replay.sequences import SequenceWriter


def stream(num_envs, steps, seed):
    """Random episode ends; every field encodes (env, step) so each stored value can be traced back."""
    g = torch.Generator().manual_seed(seed)
    terminated = torch.rand(steps, num_envs, generator=g) < 0.08
    truncated = (torch.rand(steps, num_envs, generator=g) < 0.05) & ~terminated
    ids = (torch.arange(steps).unsqueeze(1) * 10 + torch.arange(num_envs)).float()  # id = 10 t + env
    return ids, terminated, truncated


def feed(writer, ids, terminated, truncated):
    sequences = []
    for t in range(ids.shape[0]):
        obs = ids[t].unsqueeze(1).repeat(1, 2)  # [N, 2]
        next_obs = obs + 0.5  # the true successor of step t, told apart from the next step's obs
        states = (ids[t].unsqueeze(1), -ids[t])
        sequences += writer.add(obs, ids[t].long(), ids[t] / 10, terminated[t], truncated[t], next_obs, states, ids[t] / 1000)
    return sequences


def expected_windows(ids, terminated, truncated, length, period):
    """Slow reference: per env, split into episodes; a window starts every ``period`` steps of an
    episode and is emitted when full, or at the episode's end if it is the oldest one still open."""
    steps, num_envs = ids.shape
    windows = []
    for env in range(num_envs):
        episode_start = 0
        for t in range(steps):
            if not (terminated[t, env] or truncated[t, env]):
                continue
            starts = range(episode_start, t + 1, period)
            full = [s for s in starts if s + length - 1 < t]
            first_open = next((s for s in starts if s + length - 1 >= t), None)
            windows += [(env, s, s + length - 1, None, episode_start) for s in full]
            windows.append((env, first_open, t, "terminated" if terminated[t, env] else "truncated", episode_start))
            episode_start = t + 1
        windows += [(env, s, s + length - 1, None, episode_start) for s in range(episode_start, steps, period) if s + length - 1 < steps]
    return windows


@pytest.mark.parametrize("length,period,seed", [(6, 3, 0), (5, 5, 1), (7, 2, 2), (4, 1, 3)])
def test_sequences_match_the_slow_reference(length, period, seed):
    ids, terminated, truncated = stream(3, 60, seed)
    sequences = feed(SequenceWriter(3, length, period), ids, terminated, truncated)
    expected = expected_windows(ids, terminated, truncated, length, period)
    assert len(sequences) == len(expected)
    found = {}
    for seq in sequences:
        first_id = int(seq.obs[0, 0])
        n = int(seq.mask.sum())
        found[(first_id % 10, first_id // 10)] = (seq, n)
    for env, start, last, ending, episode_start in expected:
        seq, n = found[(env, start)]
        assert n == last - start + 1
        step_ids = ids[start : last + 1, env]
        torch.testing.assert_close(seq.obs[:n, 0], step_ids)
        torch.testing.assert_close(seq.obs[n], torch.full((2,), float(ids[last, env]) + 0.5))  # s'_{n-1}
        assert seq.obs[n + 1 :].eq(0).all() and seq.actions[n:].eq(0).all() and seq.rewards[n:].eq(0).all()
        assert seq.behaviour_probs[n:].eq(0).all()
        torch.testing.assert_close(seq.actions[:n], step_ids.long())
        torch.testing.assert_close(seq.rewards[:n], step_ids / 10)
        torch.testing.assert_close(seq.behaviour_probs[:n], step_ids / 1000)
        assert seq.mask.tolist() == [i < n for i in range(length)]
        assert seq.terminated.tolist() == [i == n - 1 and ending == "terminated" for i in range(length)]
        assert seq.truncated.tolist() == [i == n - 1 and ending == "truncated" for i in range(length)]
        assert float(seq.start_state[0]) == float(ids[start, env]) and float(seq.start_state[1]) == -float(ids[start, env])
        assert seq.starts_episode == (start == episode_start)
        previous = 0.0 if start == episode_start else float(ids[start - 1, env])
        assert int(seq.previous_action) == int(previous) and float(seq.previous_reward) == pytest.approx(previous / 10)


def test_hand_computed_episode_of_five_steps():
    # length 4, period 2: windows open at steps 0, 2, 4; [0..3] closes full at step 3; the episode
    # terminates at step 4, closing [2..4] (3 steps, padded); [4..4] is a suffix of it and dropped.
    writer = SequenceWriter(1, length=4, period=2)
    ids = torch.arange(5.0).unsqueeze(1)
    terminated = torch.tensor([[False], [False], [False], [False], [True]])
    sequences = feed(writer, ids * 10, terminated, torch.zeros_like(terminated))
    assert [seq.obs[:, 0].tolist() for seq in sequences] == [[0, 10, 20, 30, 30.5], [20, 30, 40, 40.5, 0]]
    assert [seq.mask.tolist() for seq in sequences] == [[True] * 4, [True, True, True, False]]
    assert sequences[1].terminated.tolist() == [False, False, True, False]
    assert [seq.starts_episode for seq in sequences] == [True, False]


def test_a_new_episode_starts_a_fresh_sequence_with_zero_previous_action_and_reward():
    writer = SequenceWriter(1, length=3, period=3)
    terminated = torch.tensor([[False], [True], [False], [False], [False]])
    sequences = feed(writer, torch.arange(1.0, 6.0).unsqueeze(1), terminated, torch.zeros_like(terminated))
    assert [seq.obs[0, 0].item() for seq in sequences] == [1.0, 3.0]
    assert sequences[1].starts_episode and sequences[1].previous_action.item() == 0 and sequences[1].previous_reward.item() == 0


def test_stored_steps_are_copies():
    writer = SequenceWriter(1, length=2, period=2)
    obs, actions, rewards = torch.ones(1, 2), torch.ones(1, dtype=torch.long), torch.ones(1)
    flags, states = torch.zeros(1, dtype=torch.bool), (torch.ones(1, 3),)
    writer.add(obs, actions, rewards, flags, flags, obs, states, rewards)
    for tensor in (obs, actions, rewards, states[0]):
        tensor.fill_(7)
    (seq,) = writer.add(obs, actions, rewards, flags, flags, obs, states, rewards)
    assert seq.obs[0].tolist() == [1.0, 1.0] and seq.actions[0].item() == 1 and seq.start_state[0].tolist() == [1.0] * 3


def test_guided_steps_are_kept_step_by_step_and_the_padding_is_unguided():
    # length 4, period 2, one episode of five steps ending at step 4 (as the hand-computed case above)
    writer = SequenceWriter(1, length=4, period=2)
    guided = [True, True, False, True, False]
    sequences = []
    for t in range(5):
        obs, flag = torch.full((1, 2), float(t)), torch.tensor([t == 4])
        sequences += writer.add(obs, torch.tensor([t]), torch.zeros(1), flag, torch.tensor([False]), obs, (torch.zeros(1, 1),),
                                torch.ones(1), torch.tensor([guided[t]]))
    assert [seq.guided.tolist() for seq in sequences] == [[True, True, False, True], [False, True, False, False]]
    flag = torch.tensor([False])
    (seq,) = SequenceWriter(1, length=1, period=1).add(torch.zeros(1, 2), torch.tensor([0]), torch.zeros(1), flag, flag,
                                                       torch.zeros(1, 2), (torch.zeros(1, 1),), torch.ones(1))
    assert seq.guided.tolist() == [False]  # no guided flags given: none guided


def test_sequences_in_progress_saved_before_guided_steps_were_kept_resume_as_unguided():
    ids, terminated, truncated = stream(2, 30, seed=4)
    writer = SequenceWriter(2, length=6, period=3)
    feed(writer, ids[:10], terminated[:10], truncated[:10])
    state = writer.state_dict()
    old_format = {"lanes": [lane | {"steps": [step[:4] for step in lane["steps"]]} for lane in state["lanes"]]}
    resumed = SequenceWriter(2, length=6, period=3)
    resumed.load_state_dict(old_format)
    expected, got = feed(writer, ids[10:], terminated[10:], truncated[10:]), feed(resumed, ids[10:], terminated[10:], truncated[10:])
    assert len(got) == len(expected) > 0
    for a, b in zip(expected, got):
        assert torch.equal(a.obs, b.obs) and torch.equal(a.actions, b.actions) and torch.equal(a.guided, b.guided)
        assert not b.guided.any()


@pytest.mark.parametrize("length,period", [(0, 1), (4, 0), (4, 5)])
def test_bad_lengths_are_refused(length, period):
    with pytest.raises(ValueError, match="period in \\[1, length\\]"):
        SequenceWriter(2, length, period)
