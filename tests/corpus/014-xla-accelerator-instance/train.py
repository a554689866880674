import torch
from lightning.fabric import Fabric
from lightning.fabric.accelerators import XLAAccelerator

fabric = Fabric(accelerator=XLAAccelerator(), devices="auto")
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(5, 5))
optimizer = fabric.setup_optimizers(torch.optim.SGD(model.parameters(), lr=0.01))
