import lightning as L
import torch


class TrainerLite(L.Fabric):
    def run(self, cfg):
        model = torch.nn.Linear(cfg["width"], cfg["width"])
        model = self.setup_module(model)
        optimizer = self.setup_optimizers(torch.optim.SGD(model.parameters(), lr=0.1))
        for _ in range(cfg["steps"]):
            self.backward(model(torch.randn(4, cfg["width"], device=self.device)).sum())
            optimizer.step()
