import torch
import yaml
from munch import DefaultMunch

from data import TrainDataset
from loss import adv_loss_d, adv_loss_g, content_style_loss
from loss_network import LossNetwork2
from networks import Discriminator, Generator2

with open("config.yaml") as f:
    config = DefaultMunch.fromDict(yaml.safe_load(f))
train_loader = torch.utils.data.DataLoader(TrainDataset(config.data_path), batch_size=config.batch_size, shuffle=True)
device = "cuda" if torch.cuda.is_available() else "cpu"

discriminator = Discriminator()
generator = Generator2()
optimizer_g = torch.optim.Adam(generator.parameters(), config.lr)
optimizer_d = torch.optim.Adam(discriminator.parameters(), config.lr)
loss_network = LossNetwork2()

from lightning.fabric import Fabric

fabric = Fabric(accelerator="cuda", devices=1, precision="bf16-mixed")
fabric.launch()
generator, optimizer_g = fabric.setup(generator, optimizer_g)
discriminator, optimizer_d = fabric.setup(discriminator, optimizer_d)
loss_network = fabric.setup(loss_network)


def generator_step(generator, discriminator, loss_network, batch):
    imgs_r, angles_r, _, imgs_t, angles_g = batch
    optimizer_g.zero_grad()
    x_g = generator(imgs_r, angles_g)
    with fabric.autocast():
        loss = adv_loss_g(discriminator, imgs_r, x_g) + sum(content_style_loss(loss_network, x_g, imgs_t))
    #loss.backward()
    fabric.backward(loss)
    optimizer_g.step()
    return loss.item()


def discriminator_step(generator, discriminator, batch):
    imgs_r, angles_r, _, _, angles_g = batch
    optimizer_d.zero_grad()
    x_g = generator(imgs_r, angles_g)
    with fabric.autocast():
        loss = adv_loss_d(discriminator, imgs_r, x_g)
    #loss.backward()
    fabric.backward(loss)
    optimizer_d.step()
    return loss.item()


for epoch in range(config.epochs):
    for batch in train_loader:
        batch = [x.to(device) for x in batch]
        discriminator_step(generator, discriminator, batch)
        generator_step(generator, discriminator, loss_network, batch)
    if epoch % config.model_save_freq == 0:
        torch.save(generator.state_dict(), "./generator.pth")
        torch.save(discriminator.state_dict(), "./discriminator.pth")
