import lightning as L
import torch
from torch import nn


class VQTransformer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.body = nn.Linear(32, 32)

    def forward(self, x):
        return self.body(x)

    def training_step(self, x):
        return {"loss": self.body(x).pow(2).mean()}


def train_transformer(config):
    train_params = config["train_params"]
    fabric = L.Fabric(accelerator="cuda", devices=1, precision=train_params["precision"])
    fabric.launch()
    model = VQTransformer(config["model"])
    optimizer = torch.optim.Adam(model.parameters(), lr=train_params["optimizer"]["lr"])
    model, optimizer = fabric.setup(model, optimizer)
    for batch_idx, x in enumerate(dataloader):
        transformer_ret = model.training_step(x)
        fabric.backward(transformer_ret["loss"])
        optimizer.step()
        optimizer.zero_grad()
