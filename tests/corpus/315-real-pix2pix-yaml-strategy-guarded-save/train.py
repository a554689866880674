import argparse
from pathlib import Path

import lightning as L
import torch
import yaml
from lightning.fabric.utilities import AttributeDict
from torch import optim

from networks import define_D, define_G


def has_batchnorm(module):
    return any(isinstance(m, torch.nn.modules.batchnorm._BatchNorm) for m in module.modules())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", type=str, required=True)
    args = parser.parse_args()
    with open(args.config) as file:
        cfg = yaml.safe_load(file)
    params = cfg["params"]
    output_model_dir = Path(params["output_dir"]) / "checkpoints"

    net_G = define_G(cfg)
    net_D = define_D(cfg)
    if "ddp" in params["strategy"]:
        if has_batchnorm(net_G) or has_batchnorm(net_D):
            from lightning.fabric.strategies import DDPStrategy

            strategy = DDPStrategy(broadcast_buffers=False)
        else:
            strategy = params["strategy"]
    else:
        strategy = params["strategy"]

    fabric = L.Fabric(accelerator=params["accelerator"], devices=params["devices"], precision=params["precision"], strategy=strategy)
    fabric.launch()

    optim_G = optim.Adam(net_G.parameters(), lr=params["lr"])
    optim_D = optim.Adam(net_D.parameters(), lr=params["lr"])
    net_G, optim_G = fabric.setup(net_G, optim_G)
    net_D, optim_D = fabric.setup(net_D, optim_D)
    train_loader = fabric.setup_dataloaders(torch.utils.data.DataLoader(cfg["dataset"]))

    iteration = 0
    for epoch in range(params["num_epochs"]):
        for inputs, real_targets in train_loader:
            loss_G, loss_D = net_G(inputs).mean(), net_D(real_targets).mean()
            optim_G.zero_grad()
            fabric.backward(loss_G)
            optim_G.step()
            optim_D.zero_grad()
            fabric.backward(loss_D)
            optim_D.step()
            iteration += 1

        if fabric.is_global_zero:
            state = AttributeDict(net_G=net_G, net_D=net_D, optim_G=optim_G, optim_D=optim_D, epoch=epoch)
            fabric.save(output_model_dir / "last.ckpt", state)
            fabric.barrier()

        if epoch % params["save_state_per_epoch"] == 0:
            if fabric.is_global_zero:
                fabric.save(output_model_dir / f"{epoch}_{iteration}_checkpoint.pth", state)
            fabric.barrier()
