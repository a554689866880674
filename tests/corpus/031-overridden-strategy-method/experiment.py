import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import DeepSpeedStrategy


class Experiment:
    def configure_strategy(self):
        raise NotImplementedError

    def run(self):
        fabric = Fabric(strategy=self.configure_strategy(), devices=4)
        fabric.launch()
        model = fabric.setup_module(torch.nn.Linear(7, 7))
        optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
        return model, optimizer


class LargeExperiment(Experiment):
    def configure_strategy(self):
        return DeepSpeedStrategy(stage=3)


if __name__ == "__main__":
    LargeExperiment().run()
