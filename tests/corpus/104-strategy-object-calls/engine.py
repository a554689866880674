from lightning.fabric.strategies import DeepSpeedStrategy


class Engine:
    def __init__(self):
        self.strategy = DeepSpeedStrategy(stage=2)

    def setup_module(self, model):
        return self.strategy.setup_module(model)

    def setup_optimizers(self, *optimizers):
        return [self.strategy.setup_optimizer(o) for o in optimizers]
