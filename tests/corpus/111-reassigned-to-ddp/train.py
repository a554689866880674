import torch
from lightning.fabric import Fabric

fabric = Fabric(strategy="deepspeed", devices=2)
if not torch.cuda.is_available():
    raise SystemExit("needs GPUs")
fabric = Fabric(strategy="ddp", devices=2)  # DeepSpeed did not fit our optimizer layout
fabric.launch()

model = fabric.setup_module(torch.nn.Linear(10, 10))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
