"""Minibatches cover every sample once per epoch, with all fields aligned."""

import torch

from voidrl.rollout import minibatches
from voidrl.rollout.minibatches import shuffled_minibatches


def test_small_and_large_fields_stay_aligned_and_cover_every_sample(monkeypatch):
    monkeypatch.setattr(minibatches, "PERMUTE_WHOLE_BYTES", 100)  # "large" = gathered per minibatch
    ids = torch.arange(50)
    fields = {"small": ids.clone().to(torch.int8), "large": ids[:, None].repeat(1, 8).float()}
    assert fields["small"].nbytes <= 100 < fields["large"].nbytes
    seen = []
    for batch in shuffled_minibatches(fields, 16):
        assert torch.equal(batch["large"][:, 0].long(), batch["small"].long())
        assert torch.equal(batch["large"], batch["large"][:, :1].expand(-1, 8))
        seen.append(batch["small"].long())
    assert [len(b) for b in seen] == [16, 16, 16, 2]
    assert torch.equal(torch.cat(seen).sort().values, ids)
    assert not torch.equal(torch.cat(seen), ids)  # shuffled
