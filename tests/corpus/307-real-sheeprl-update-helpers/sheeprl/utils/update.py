from __future__ import annotations

import itertools
from typing import Iterable, List, Optional

import torch
from lightning import Fabric
from torch import Tensor, nn
from torch.optim import Optimizer

from sheeprl.utils.fabric import get_single_device_fabric


def setup_module(fabric: Fabric, module: nn.Module):
    module = get_single_device_fabric(fabric).setup_module(module)
    if fabric.world_size > 1:
        for tensor in itertools.chain(module.parameters(), module.buffers()):
            torch.distributed.broadcast(tensor.data, src=0)
    return module


def update(fabric: Fabric, loss: Tensor, optimizer: Optimizer, max_grad_norm: float = 0.0,
           params: Optional[Iterable[Tensor]] = None) -> None:
    params = [p for group in optimizer.param_groups for p in group["params"]] if params is None else list(params)
    optimizer.zero_grad(set_to_none=True)
    fabric.backward(loss, inputs=params)
    all_reduce_gradients(fabric, params)
    if max_grad_norm > 0.0:
        fabric.clip_gradients(None, optimizer, max_norm=max_grad_norm)
    optimizer.step()


def all_reduce_gradients(fabric: Fabric, params: List[Tensor]) -> None:
    if fabric.world_size == 1:
        return
    grads = [p.grad for p in params if p.grad is not None]
    if len(grads) == 0:
        return
    flat = fabric.all_reduce(torch.cat([g.reshape(-1) for g in grads]), reduce_op="mean")
    offset = 0
    for g in grads:
        g.copy_(flat[offset : offset + g.numel()].view_as(g))
        offset += g.numel()
