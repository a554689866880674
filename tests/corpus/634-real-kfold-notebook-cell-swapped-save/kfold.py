#%%
from pathlib import Path

import torch.nn as nn
import torch.optim as optim
from lightning.fabric import Fabric, seed_everything
from sklearn.model_selection import StratifiedKFold
from torchvision import models


def run(image_folder: Path, **train_configs):
    fabric = Fabric(accelerator="auto", devices=1)
    seed_everything(42)
    dataset, labels = scan_dataset(image_folder)
    kfold = StratifiedKFold(n_splits=5)
    for fold, (train_ids, val_ids) in enumerate(kfold.split(dataset, labels)):
        model = models.resnet18(num_classes=len(set(labels)))
        optimizer = optim.Adam(model.parameters(), lr=1e-4)
        fold_model, optimizer = fabric.setup(model, optimizer)
        for epoch in range(train_configs["epochs"]):
            train_step(fold_model, fabric, optimizer, dataset, train_ids)
        if train_configs["dry_run"]:
            break

    if train_configs["save_model"]:
        fabric.save(model.state_dict(), "model.pt")

run(Path("data/image_classification"), epochs=10, dry_run=False, save_model=True)
# %%
