import argparse

import lightning as L
import torch


class Trainer:
    def __init__(self, precision: str, devices: int = 1):
        self.fabric = L.Fabric(accelerator="cuda", devices=devices, precision=precision)

    def fit(self, model, optimizer, train_loader, epochs: int = 1):
        self.fabric.launch()
        self.model, self.optimizer = self.fabric.setup(model, optimizer)
        train_loader = self.fabric.setup_dataloaders(train_loader)
        for _ in range(epochs):
            for batch in train_loader:
                self.training_step(batch)

    def training_step(self, batch):
        self.optimizer.zero_grad()
        outputs = self.model(**batch)
        loss = outputs["loss"]
        loss.backward()
        self.optimizer.step()
        return loss.detach()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--precision", choices=["32-true", "16-mixed", "bf16-mixed"], default="32-true")
    args = parser.parse_args()
    trainer = Trainer(precision=args.precision)
    model = torch.nn.Linear(8, 8)
    trainer.fit(model, torch.optim.SGD(model.parameters(), lr=0.1), [])


if __name__ == "__main__":
    main()
