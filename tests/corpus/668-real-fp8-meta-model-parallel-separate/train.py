import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed._composable.fsdp.fully_shard import fully_shard
from torch.distributed.device_mesh import DeviceMesh

import lightning as L
from lightning.fabric.strategies import ModelParallelStrategy
from lightning.pytorch.demos import Transformer, WikiText2


def configure_model(model: nn.Module, device_mesh: DeviceMesh) -> nn.Module:
    for module in model.modules():
        if isinstance(module, (torch.nn.TransformerEncoderLayer, torch.nn.TransformerDecoderLayer)):
            fully_shard(module, mesh=device_mesh)
    fully_shard(model, mesh=device_mesh)
    return torch.compile(model)


def train():
    dataset = WikiText2()
    with torch.device("meta"):
        model = Transformer(vocab_size=dataset.vocab_size, nlayers=16, nhid=4096, ninp=1024, nhead=32)

    strategy = ModelParallelStrategy(data_parallel_size=4, tensor_parallel_size=1, parallelize_fn=configure_model)
    fabric = L.Fabric(precision="bf16-true", strategy=strategy)
    fabric.launch()

    model = fabric.setup(model)

    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    optimizer = fabric.setup_optimizers(optimizer)

    for i in range(10):
        input, target = dataset[i]
        output = model(input.unsqueeze(0), target.unsqueeze(0))
        loss = F.nll_loss(output, target.view(-1))
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    train()
