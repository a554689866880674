import lightning.pytorch as pl
from lightning.pytorch.strategies import DeepSpeedStrategy


class LoggingDeepSpeed(DeepSpeedStrategy):
    def setup_optimizers(self, trainer: "pl.Trainer") -> None:
        print("setting up optimizers")
        super().setup_optimizers(trainer)


class DataModule(pl.LightningDataModule):
    def setup(self, stage: str) -> None:
        self.stage = stage


def rebuild_optimizers(trainer: pl.Trainer) -> None:
    trainer.strategy.setup_optimizers(trainer)
