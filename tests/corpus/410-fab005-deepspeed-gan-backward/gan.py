import lightning as L
import torch
from torch import nn


def train(fabric, generator, discriminator, g_opt, d_opt, loader, nz: int = 100):
    criterion = nn.BCEWithLogitsLoss()
    for real, _ in loader:
        noise = torch.randn(real.size(0), nz, 1, 1, device=fabric.device)
        fake = generator(noise)

        d_opt.zero_grad()
        d_real = discriminator(real)
        d_fake = discriminator(fake.detach())
        err_d = criterion(d_real, torch.ones_like(d_real)) + criterion(d_fake, torch.zeros_like(d_fake))
        fabric.backward(err_d)
        d_opt.step()

        g_opt.zero_grad()
        err_g = criterion(discriminator(fake), torch.ones_like(d_fake))
        fabric.backward(err_g)
        g_opt.step()


def main():
    fabric = L.Fabric(accelerator="cuda", devices=2, strategy="deepspeed_stage_2", precision="16-mixed")
    fabric.launch()
    generator = nn.Sequential(nn.ConvTranspose2d(100, 3, 4))
    discriminator = nn.Sequential(nn.Conv2d(3, 1, 4))
    g_opt = torch.optim.Adam(generator.parameters(), lr=2e-4, betas=(0.5, 0.999))
    d_opt = torch.optim.Adam(discriminator.parameters(), lr=2e-4, betas=(0.5, 0.999))
    generator, g_opt = fabric.setup(generator, g_opt)
    discriminator, d_opt = fabric.setup(discriminator, d_opt)
    train(fabric, generator, discriminator, g_opt, d_opt, [])


if __name__ == "__main__":
    main()
