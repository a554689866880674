import os

import lightning.fabric as lightning_fabric
import torch
from absl import logging


def load_from_checkpoint(
    fabric: lightning_fabric.Fabric,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    checkpoint_file_to_resume_from: str,
    load_full_checkpoint: bool = True,
):
    checkpoint = {"model": model}
    if load_full_checkpoint:
        checkpoint.update({"optimizer": optimizer, "loss_statistics": {}})
    fabric.load(checkpoint_file_to_resume_from, checkpoint, strict=True)
    return model, checkpoint.get("loss_statistics"), optimizer


def save_to_checkpoint(fabric: lightning_fabric.Fabric, model, config, optimizer, statistics, checkpoint_name=None) -> str:
    checkpoint_name = checkpoint_name or f"checkpoint_{statistics.step}.pt"
    checkpoint_file = os.path.join(config.checkpointing.directory, checkpoint_name)
    checkpoint = {"model": model, "loss_statistics": statistics.as_dict(), "optimizer": optimizer}
    fabric.save(path=checkpoint_file, state=checkpoint)

    if fabric.is_global_zero:
        keep = config.checkpointing.keep_only_last_n_checkpoints
        if keep is not None:
            files = sorted(
                (f for f in os.listdir(config.checkpointing.directory) if f.startswith("checkpoint_")),
                key=lambda x: int(x.split("_")[-1].split(".")[0]),
            )
            for f in files[:-keep]:
                logging.info("Removing too old checkpoint %s...", f)
                os.remove(os.path.join(config.checkpointing.directory, f))
    return checkpoint_file
