import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import DeepSpeedStrategy

strategy = DeepSpeedStrategy(stage=3, offload_optimizer=True, offload_parameters=True)
fabric = Fabric(strategy=strategy, devices=4, precision="bf16-true")
fabric.launch()

with fabric.init_module():
    model = torch.nn.Transformer(d_model=256, nhead=4)
model = fabric.setup_module(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
optimizer = fabric.setup_optimizers(optimizer)
