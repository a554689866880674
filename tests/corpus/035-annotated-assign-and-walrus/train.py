import torch
from lightning.fabric import Fabric

fabric: Fabric = Fabric(accelerator="tpu", strategy=(name := "xla"))
print("strategy:", name)
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(7, 7))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
