import argparse

import lightning as L
import torch


class MyFabric(L.Fabric):
    def fit(self, steps: int):
        model = self.setup_module(torch.nn.Linear(16, 16))
        optimizer = torch.optim.AdamW(model.parameters())
        optimizer = self.setup_optimizers(optimizer)
        for _ in range(steps):
            self.backward(model(torch.randn(2, 16, device=self.device)).sum())
            optimizer.step()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--strategy", choices=["ddp", "fsdp", "deepspeed"], default="ddp")
    args = parser.parse_args()
    fabric = MyFabric(accelerator="cuda", devices=4, strategy=args.strategy)
    fabric.launch()
    fabric.fit(100)
