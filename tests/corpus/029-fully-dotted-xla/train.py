import torch
import lightning

fabric = lightning.Fabric(accelerator="tpu", strategy=lightning.fabric.strategies.xla.XLAStrategy())
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(7, 7))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
