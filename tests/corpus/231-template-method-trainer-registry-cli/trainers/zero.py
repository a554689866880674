from lightning.fabric.strategies import DeepSpeedStrategy

from trainers.base import BaseTrainer


class ZeroTrainer(BaseTrainer):
    def _setup_strategy(self):
        return DeepSpeedStrategy(stage=3)
