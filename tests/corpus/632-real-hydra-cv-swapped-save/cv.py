import hydra
from lightning.fabric import Fabric
from omegaconf import DictConfig
from sklearn.model_selection import KFold


def train_cv(cfg: DictConfig, dm):
    fabric = Fabric(accelerator=cfg.trainer.accelerator, devices=cfg.trainer.devices)
    fabric.launch()
    kfold = KFold(n_splits=cfg.n_splits)
    for fold, (train_ids, val_ids) in enumerate(kfold.split(dm.dataset)):
        model = hydra.utils.instantiate(cfg.model)
        optimizer = hydra.utils.instantiate(cfg.optimizer, params=model.parameters())
        model, optimizer = fabric.setup(model, optimizer)
        for epoch in range(cfg.epochs):
            train_dataloader(model, dm, optimizer, fabric, epoch, cfg, fold)
        if cfg.dry_run:
            break

    # When using distributed training, use `fabric.save`
    if cfg.save_model:
        fabric.save(model.state_dict(), "test.pt")


@hydra.main(version_base=None, config_path="config", config_name="cv")
def run(cfg: DictConfig):
    dm = hydra.utils.instantiate(cfg.data)
    train_cv(cfg, dm)
