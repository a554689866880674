import torch
import lightning as L

fabric = L.Fabric(accelerator="tpu", strategy="xla_fsdp")
fabric.launch()

model = fabric.setup_module(torch.nn.Linear(10, 10))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
