import torch
import torch.nn as nn
from lightning.fabric import Fabric
from lightning.fabric.strategies import FSDPStrategy
from torch.distributed.fsdp.wrap import always_wrap_policy
from torch.utils.data import DataLoader, TensorDataset


class BasicFabricTemplate(Fabric):
    def get_model(self):
        return nn.Linear(32, 2)

    def step(self, model, batch):
        output = model(batch)
        return torch.nn.functional.mse_loss(output, torch.ones_like(output))

    def run(self) -> None:
        with self.init_module(empty_init=True):
            model = self.get_model()
        optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
        model, optimizer = self.setup(model, optimizer)

        dataloader = DataLoader(TensorDataset(torch.randn(64, 32)))
        dataloader = self.setup_dataloaders(dataloader)
        model.train()
        (batch,) = next(iter(dataloader))
        loss = self.step(model, batch)
        self.backward(loss)
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    fabric = BasicFabricTemplate(accelerator="cuda", strategy=FSDPStrategy(auto_wrap_policy=always_wrap_policy), devices=2)
    fabric.run()
