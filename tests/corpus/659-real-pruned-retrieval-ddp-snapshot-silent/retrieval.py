import argparse
import os

import lightning as L
import torch
import yaml

from models import BLIPRetrieval, XVLMRetrieval
from optim import create_optimizer, create_scheduler


def main(args, config):
    fabric = L.Fabric(
        accelerator="cuda",
        strategy="ddp",
        precision=args.precision,
        devices=args.devices,
    )
    fabric.launch()
    L.seed_everything(args.seed)

    model = XVLMRetrieval(config=config) if args.model == "xvlm" else BLIPRetrieval(**config["blip"])
    model.load_pretrained(args.pretraining_weights, config, is_eval=False)
    optimizer = create_optimizer(config["optimizer"], model)
    optimizer = fabric.setup_optimizers(optimizer)

    # load and resume from a snapshot if provided
    if os.path.exists(args.snapshot):
        snapshot = fabric.load(args.snapshot)
        model.load_state_dict(snapshot["model_state"])
        optimizer.load_state_dict(snapshot["optimizer_state"])
        sched_state_dict = snapshot["scheduler"]
        epochs_run = snapshot["epochs_run"] + 1
        best_r_mean = snapshot["best_r_mean"]
        best_epoch = snapshot["best_epoch"]
    else:
        epochs_run, best_r_mean, best_epoch, sched_state_dict = 0, 0, 0, None

    lr_scheduler = create_scheduler(config["scheduler"], optimizer)
    if sched_state_dict is not None:
        lr_scheduler.load_state_dict(sched_state_dict)

    model = fabric.setup_module(model)
    train_loader = fabric.setup_dataloaders(create_loader(config), use_distributed_sampler=False)
    max_epoch = config["scheduler"]["epochs"]
    save_freq = config.get("save_freq", 1)

    for epoch in range(epochs_run, max_epoch):
        train_one_epoch(model, train_loader, optimizer, fabric, lr_scheduler)
        r_mean = evaluate(model, fabric)
        if r_mean > best_r_mean:
            ckpt = {
                "model_state": model,
                "optimizer_state": optimizer,
                "scheduler": lr_scheduler.state_dict(),
                "config": config,
                "epochs_run": epoch,
            }
            fabric.save(os.path.join(args.output_dir, "checkpoint_best.pt"), ckpt)
            best_r_mean, best_epoch = r_mean, epoch

        if (epoch + 1) % save_freq == 0:
            snapshot = {
                "model_state": model,
                "optimizer_state": optimizer,
                "scheduler": lr_scheduler.state_dict(),
                "epochs_run": epoch,
                "best_r_mean": best_r_mean,
                "best_epoch": best_epoch,
            }
        fabric.save(args.snapshot, snapshot)

    fabric.barrier()
    snapshot = fabric.load(os.path.join(args.output_dir, "checkpoint_best.pt"))
    model.load_state_dict(snapshot["model_state"])


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", type=str, required=True, choices=["xvlm", "blip"])
    parser.add_argument("-pre", "--pretraining_weights", type=str, required=True)
    parser.add_argument("--snapshot", type=str, default="snapshot.pt")
    parser.add_argument("--config", type=str, required=True)
    parser.add_argument("--output_dir", type=str, required=True)
    parser.add_argument("--seed", default=42, type=int)
    parser.add_argument("--devices", type=int, default=1)
    parser.add_argument("--precision", type=str, default="bf16-mixed", choices=["32-true", "bf16-mixed", "16-mixed"])
    args = parser.parse_args()
    main(args, yaml.load(open(args.config), Loader=yaml.Loader))
