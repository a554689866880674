import torch
from torch import nn
from torch.optim import AdamW
from torch.optim.lr_scheduler import CosineAnnealingLR
from torch.utils.data import DataLoader
from lightning.fabric import Fabric
from lightning.fabric.loggers import TensorBoardLogger

from vocos.dataset import VocosDataset
from vocos.discriminators import MultiPeriodDiscriminator, MultiResolutionDiscriminator
from vocos.loss import DiscriminatorLoss, GeneratorLoss
from vocos.models import VocosBackbone

NUM_EPOCHS = 1000
LEARNING_RATE = 5e-4


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.multi_period = MultiPeriodDiscriminator()
        self.multi_resolution = MultiResolutionDiscriminator()


def main():
    fabric = Fabric(loggers=TensorBoardLogger(root_dir="logs"), precision="bf16-mixed")
    fabric.launch()
    fabric.seed_everything(4444)

    dataloader = DataLoader(VocosDataset(filelist_path="filelist.train"), 16, shuffle=True)
    with fabric.init_module():
        generator = VocosBackbone()
        discriminator = Discriminator()
        discriminator_loss = DiscriminatorLoss()
        generator_loss = GeneratorLoss()

    optimizer_g = AdamW(generator.parameters(), lr=LEARNING_RATE, betas=(0.8, 0.9))
    optimizer_d = AdamW(discriminator.parameters(), lr=LEARNING_RATE, betas=(0.8, 0.9))
    scheduler_g = CosineAnnealingLR(optimizer_g, T_max=NUM_EPOCHS)
    scheduler_d = CosineAnnealingLR(optimizer_d, T_max=NUM_EPOCHS)
    generator, optimizer_g = fabric.setup(generator, optimizer_g)
    discriminator, optimizer_d = fabric.setup(discriminator, optimizer_d)
    dataloader = fabric.setup_dataloaders(dataloader)

    step = 0
    for epoch in range(NUM_EPOCHS):
        for audio_real in dataloader:
            audio_fake = generator(audio_real)
            optimizer_d.zero_grad()
            real_mp, fake_mp, _, _ = discriminator.multi_period(audio_real, audio_fake.detach())
            loss_d, _, _ = discriminator_loss(real_mp, fake_mp)
            fabric.backward(loss_d)
            optimizer_d.step()

            optimizer_g.zero_grad()
            _, fake_mp, _, _ = discriminator.multi_period(audio_real, audio_fake)
            loss_g, _ = generator_loss(fake_mp)
            fabric.backward(loss_g)
            optimizer_g.step()
            if step % 100 == 0:
                fabric.log_dict({"d": loss_d.item(), "g": loss_g.item()}, step)
            step += 1
        scheduler_d.step()
        scheduler_g.step()


if __name__ == "__main__":
    main()
