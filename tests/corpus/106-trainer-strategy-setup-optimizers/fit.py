import lightning.pytorch as pl

from strategy import DataModule, LoggingDeepSpeed, rebuild_optimizers

trainer = pl.Trainer(strategy=LoggingDeepSpeed(stage=3), devices=4)
dm = DataModule()
dm.setup("fit")
rebuild_optimizers(trainer)
