import torch
from lightning.fabric import Fabric

fabric = Fabric(strategy="deepspeed", devices=2)
fabric.launch()
generator = fabric.setup_module(torch.nn.Linear(100, 784))
discriminator = fabric.setup_module(torch.nn.Linear(784, 1))
opt_g = torch.optim.Adam(generator.parameters(), lr=2e-4)
opt_d = torch.optim.Adam(discriminator.parameters(), lr=2e-4)
opt_g, opt_d = fabric.setup_optimizers(opt_g, opt_d)
