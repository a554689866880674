import argparse
import os

import lightning as L
import torch
from box import Box
from lightning.fabric.loggers import TensorBoardLogger

from datasets import call_load_dataset
from model import Model
from sam_lora import LoRA_Sam
from utils.tools import copy_model


def train_sam(cfg: Box, fabric: L.Fabric, model: Model, anchor_model: Model, optimizer, scheduler, all_dataloader):
    """The SAM test-time adaptation loop."""
    for epoch in range(0, 1):
        for iter, data in enumerate(all_dataloader):
            loss_total = model.adaptation_loss(anchor_model, data)
            fabric.backward(loss_total)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()

    state = {"model": model, "optimizer": optimizer}
    fabric.save(os.path.join(cfg.out_dir, "save-ckpt", f"{cfg.dataset}-{cfg.prompt}-last-ckpt.pth"), state)


def configure_opt(cfg: Box, model: Model):
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.opt.learning_rate, weight_decay=cfg.opt.weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    return optimizer, scheduler


def main(cfg: Box, ckpt: str = None) -> None:
    num_devices = len(cfg.gpu_ids.split(","))
    fabric = L.Fabric(accelerator="auto",
                      devices=num_devices,
                      strategy="auto",
                      loggers=[TensorBoardLogger(cfg.out_dir, name=f"{cfg.dataset}-{cfg.prompt}")])
    fabric.launch()
    fabric.seed_everything(1337 + fabric.global_rank)

    with fabric.device:
        model = Model(cfg)
        model.setup()
        anchor_model = copy_model(model)
        LoRA_Sam(model.model, 4)

    all_data = call_load_dataset(cfg)(cfg, model.model.image_encoder.img_size)[0]
    optimizer, scheduler = configure_opt(cfg, model.model)
    if ckpt is not None:
        full_checkpoint = fabric.load(ckpt)
        model.load_state_dict(full_checkpoint["model"])
    all_data = fabric._setup_dataloader(all_data)
    model, optimizer = fabric.setup(model, optimizer)
    train_sam(cfg, fabric, model, anchor_model, optimizer, scheduler, all_data)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Training script")
    parser.add_argument("--cfg", type=str, required=True)
    parser.add_argument("--gpu_ids", type=str)
    args = parser.parse_args()
    main(Box(gpu_ids=args.gpu_ids or "0"))
