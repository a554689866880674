import lightning as L
import torch


class Lite(L.Fabric):
    def __init__(self):
        super().__init__(accelerator="cuda", devices=4, strategy="ddp")

    def run(self):
        model = self.setup_module(torch.nn.Linear(16, 16))
        optimizer = self.setup_optimizers(torch.optim.AdamW(model.parameters()))
        self.backward(model(torch.randn(2, 16, device=self.device)).sum())
        optimizer.step()


if __name__ == "__main__":
    Lite().run()
