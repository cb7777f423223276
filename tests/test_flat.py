"""FlatParameters behaves like the parameters it re-homes."""

import copy
import faulthandler

import pytest
import torch
from torch import nn

from voidrl.nets.bodies import nature_cnn
from voidrl.nets.flat import FlatParameters, TrainedParameters, compiled_gradient


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


def _step_in_group(rank: int, world_size: int, init_file: str, out_dir: str) -> None:
    """One process of a gloo group: the same network, its own data, one TrainedParameters step."""
    faulthandler.enable(all_threads=True)  # an abort in gloo's teardown prints where each thread was
    torch.distributed.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size)
    try:
        torch.manual_seed(0)
        net = nn.Linear(3, 2)
        trained = TrainedParameters(net.parameters(), lambda flat: torch.optim.SGD([flat], lr=0.1))
        trained.minimize(net(torch.full((4, 3), float(rank + 1))).pow(2).sum())
        torch.save({"grad": trained.flat.grad.clone(), "params": trained.flat.detach().clone()}, f"{out_dir}/rank{rank}.pt")
    finally:
        torch.distributed.destroy_process_group()


@pytest.mark.slow
def test_a_step_in_a_process_group_averages_the_gradients_so_every_process_takes_the_same_step(tmp_path):
    torch.multiprocessing.spawn(_step_in_group, args=(2, str(tmp_path / "init"), str(tmp_path)), nprocs=2)
    results = [torch.load(tmp_path / f"rank{rank}.pt") for rank in range(2)]
    gradients = []
    for rank in range(2):  # each process's own gradient, computed here without a group
        torch.manual_seed(0)
        net = nn.Linear(3, 2)
        flat = FlatParameters(net.parameters())
        net(torch.full((4, 3), float(rank + 1))).pow(2).sum().backward()
        gradients.append(flat.flat.grad.clone())
        start = flat.flat.detach().clone()
    mean = (gradients[0] + gradients[1]) / 2
    assert not torch.allclose(gradients[0], gradients[1])
    for result in results:
        torch.testing.assert_close(result["grad"], mean)
        torch.testing.assert_close(result["params"], start - 0.1 * mean)


def test_without_a_process_group_the_step_is_the_plain_clipped_step():
    torch.manual_seed(0)
    plain, net = nn.Linear(3, 2), nn.Linear(3, 2)
    net.load_state_dict(plain.state_dict())
    trained = TrainedParameters(net.parameters(), lambda flat: torch.optim.SGD([flat], lr=0.1))
    optimizer = torch.optim.SGD(plain.parameters(), lr=0.1)
    x = torch.randn(5, 3)
    norm = trained.minimize(net(x).pow(2).sum(), max_grad_norm=0.5)
    plain(x).pow(2).sum().backward()
    expected_norm = nn.utils.clip_grad_norm_(plain.parameters(), 0.5)
    optimizer.step()
    torch.testing.assert_close(norm, expected_norm)
    for a, b in zip(plain.parameters(), net.parameters()):
        torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-7)


@pytest.mark.slow
def test_compiled_gradient_is_autograds_and_leaves_the_parameters_alone():
    """``compiled_gradient`` of a loss that runs a network, against autograd's gradient of the same loss on the same
    parameters (a transposed weight's strides included), its metrics passed through; ``descend`` then takes the step
    ``minimize`` takes."""
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2))
    net[2].weight = nn.Parameter(net[2].weight.detach().t().contiguous().t())  # non-contiguous [2, 8]
    reference = copy.deepcopy(net)
    trained = TrainedParameters(net.parameters(), lambda flat: torch.optim.SGD([flat], lr=0.1))
    reference_trained = TrainedParameters(reference.parameters(), lambda flat: torch.optim.SGD([flat], lr=0.1))
    x, target = torch.randn(5, 3), torch.randn(5, 2)

    def loss(inputs, targets):
        error = net(inputs) - targets
        return error.pow(2).mean() + net[0].bias.abs().sum(), {"error": error.detach().abs().max()}

    gradient = compiled_gradient(net, trained, loss)
    for _ in range(3):
        before = trained.flat.detach().clone()
        compiled, metrics = gradient(x, target)
        torch.testing.assert_close(trained.flat.detach(), before, rtol=0, atol=0)
        expected_loss = (reference(x) - target).pow(2).mean() + reference[0].bias.abs().sum()
        expected_norm = reference_trained.minimize(expected_loss, max_grad_norm=0.5)
        torch.testing.assert_close(metrics["error"], (net(x) - target).abs().max())
        torch.testing.assert_close(trained.descend(compiled, max_grad_norm=0.5), expected_norm)
        torch.testing.assert_close(trained.flat.detach(), reference_trained.flat.detach(), rtol=1e-5, atol=1e-6)


def test_compiled_gradient_refuses_a_parameter_outside_the_flat_buffer():
    net = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 1))
    trained = FlatParameters(net[0].parameters())
    with pytest.raises(ValueError, match="parameter network.1.weight is not a view of the flat parameters"):
        compiled_gradient(net, trained, lambda x: (net(x).sum(), {}))
