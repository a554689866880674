import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import XLAStrategy


class Runner:
    fabric = None

    def setup(self):
        self.fabric = Fabric(accelerator="tpu", strategy=XLAStrategy())
        self.fabric.launch()

    def train(self, model):
        model = self.fabric.setup_module(model)
        opt = self.fabric.setup_optimizers(torch.optim.SGD(model.parameters(), lr=0.1))
        return model, opt


runner = Runner()
runner.setup()
runner.train(torch.nn.Linear(1, 1))
