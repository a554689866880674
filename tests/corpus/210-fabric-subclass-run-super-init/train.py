import lightning as L
import torch


class Lite(L.Fabric):
    def __init__(self):
        super().__init__(accelerator="cuda", devices=4, strategy="deepspeed_stage_2", precision="bf16-mixed")

    def run(self, epochs: int):
        model = torch.nn.Linear(32, 32)
        model = self.setup_module(model)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        optimizer = self.setup_optimizers(optimizer)
        for _ in range(epochs):
            loss = model(torch.randn(8, 32, device=self.device)).sum()
            self.backward(loss)
            optimizer.step()


if __name__ == "__main__":
    Lite().run(10)
