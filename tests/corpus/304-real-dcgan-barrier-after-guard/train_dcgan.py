"""DCGAN with Lightning Fabric (modelled on a public port of the PyTorch DCGAN tutorial)."""
import time
from pathlib import Path

import torch
import torch.nn as nn
import torch.optim as optim
import torchvision.utils
from lightning.fabric import Fabric, seed_everything

import models

nz = 100
lr = 0.0002
beta1 = 0.5
num_epochs = 100
num_gpus = 1


def main():
    seed_everything(999)
    fabric = Fabric(accelerator="auto", devices=num_gpus)
    fabric.launch()

    dataloader = models.get_dataloader()
    output_dir = Path("outputs-fabric", time.strftime("%Y%m%d-%H%M%S"))
    output_dir.mkdir(parents=True, exist_ok=True)

    generator = models.get_model("vanilla_gan", "generator")
    discriminator = models.get_model("vanilla_gan", "discriminator")
    criterion = nn.BCELoss()
    fixed_noise = torch.randn(64, nz, 1, 1, device=fabric.device)

    optimizer_d = optim.Adam(discriminator.parameters(), lr=lr, betas=(beta1, 0.999))
    optimizer_g = optim.Adam(generator.parameters(), lr=lr, betas=(beta1, 0.999))
    discriminator, optimizer_d = fabric.setup(discriminator, optimizer_d)
    generator, optimizer_g = fabric.setup(generator, optimizer_g)
    dataloader = fabric.setup_dataloaders(dataloader)

    iteration = 0
    for epoch in range(num_epochs):
        for i, data in enumerate(dataloader, 0):
            discriminator.zero_grad()
            real = data[0]
            label = torch.full((real.size(0),), 1.0, device=fabric.device)
            output = discriminator(real).view(-1)
            err_d_real = criterion(output, label)
            fabric.backward(err_d_real)

            noise = torch.randn(real.size(0), nz, 1, 1, device=fabric.device)
            fake = generator(noise)
            label.fill_(0.0)
            output = discriminator(fake.detach()).view(-1)
            err_d_fake = criterion(output, label)
            fabric.backward(err_d_fake)
            optimizer_d.step()

            generator.zero_grad()
            label.fill_(1.0)
            output = discriminator(fake).view(-1)
            err_g = criterion(output, label)
            fabric.backward(err_g)
            optimizer_g.step()

            if iteration % 500 == 0:
                with torch.no_grad():
                    fake = generator(fixed_noise).detach().cpu()
                if fabric.is_global_zero:
                    torchvision.utils.save_image(fake, output_dir / f"fake-{iteration:04d}.png", padding=2, normalize=True)
                fabric.barrier()
            iteration += 1


if __name__ == "__main__":
    main()
