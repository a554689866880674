import lightning as L
import torch
import torch.nn.functional as F
from lightning.fabric.strategies import ModelParallelStrategy
from model import ModelArgs, Transformer
from parallelism import parallelize
from torch.utils.data import DataLoader


def train():
    strategy = ModelParallelStrategy(
        parallelize_fn=parallelize,
        data_parallel_size=2,
        tensor_parallel_size=2,
    )

    fabric = L.Fabric(accelerator="cuda", devices=4, strategy=strategy)
    fabric.launch()

    model_args = ModelArgs(vocab_size=32000)
    with fabric.init_module(empty_init=True):
        model = Transformer(model_args)

    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, foreach=True)
    model, optimizer = fabric.setup(model, optimizer)
    model.init_weights()

    dataloader = fabric.setup_dataloaders(DataLoader(torch.randint(0, 32000, (64, 129)), batch_size=8))
    for i, batch in enumerate(dataloader):
        output = model(batch[:, :-1])
        loss = F.cross_entropy(output.reshape(-1, output.size(-1)), batch[:, 1:].reshape(-1))
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    train()
