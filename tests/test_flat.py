"""FlatParameters behaves like the parameters it re-homes."""

import copy

import torch
from torch import nn

from voidrl.nets.bodies import nature_cnn
from voidrl.nets.flat import FlatParameters


def test_gradients_clipping_and_steps_match_plain_parameters():
    torch.manual_seed(0)
    plain = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2))
    flat_net = copy.deepcopy(plain)
    flat = FlatParameters(flat_net.parameters())
    x = torch.randn(5, 3)
    for _ in range(3):
        plain.zero_grad()
        plain(x).pow(2).sum().backward()
        expected_norm = nn.utils.clip_grad_norm_(plain.parameters(), 0.1)
        flat.zero_grad()
        flat_net(x).pow(2).sum().backward()
        norm = flat.clip_grad_norm_(0.1)
        torch.testing.assert_close(norm, expected_norm)
        for a, b in zip(plain.parameters(), flat_net.parameters()):
            torch.testing.assert_close(b.grad, a.grad, rtol=1e-5, atol=1e-7)
        with torch.no_grad():  # a plain SGD step on the flat buffer moves the module's parameters
            for p in plain.parameters():
                p -= 0.5 * p.grad
            flat.flat -= 0.5 * flat.flat.grad
        for a, b in zip(plain.parameters(), flat_net.parameters()):
            torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-7)


def test_load_state_dict_writes_into_the_buffer_and_channels_last_survives():
    net = nature_cnn((4, 84, 84))
    flat = FlatParameters(net.parameters())
    conv = net.convs[0].weight
    assert conv.is_contiguous(memory_format=torch.channels_last)
    source = nature_cnn((4, 84, 84))
    net.load_state_dict(source.state_dict())
    assert torch.equal(conv, source.convs[0].weight)
    assert conv.data_ptr() >= flat.flat.data_ptr()
    offsets = sorted(p.data_ptr() for p in net.parameters())
    assert offsets[0] == flat.flat.data_ptr()
    assert torch.equal(flat.flat.data[: conv.numel()].sort().values, conv.detach().flatten().sort().values)
