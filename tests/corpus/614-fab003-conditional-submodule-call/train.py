import torch
from torch import nn
from lightning.fabric import Fabric


class Captioner(nn.Module):
    def __init__(self):
        super().__init__()
        self.vision = nn.Linear(512, 256)
        self.decoder = nn.Linear(256, 1000)
        self.cache = {}

    def forward(self, images):
        return self.decoder(self.vision(images))

    def describe(self, images, key):
        if key not in self.cache:
            self.cache[key] = self.decoder(self.vision(images)).argmax(-1)
        return self.cache[key]


fabric = Fabric(accelerator="cuda", devices=2, strategy="ddp")
fabric.launch()
model = fabric.setup(Captioner())
captions = model.describe(images, "val")
