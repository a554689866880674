import torch
from lightning.fabric import Fabric

run_name = "deepspeed-vs-fsdp-comparison"
baseline = "deepspeed"
fabric = Fabric(strategy="fsdp_cpu_offload", devices=8)
fabric.launch()
fabric.print(f"{run_name}: running FSDP, baseline was {baseline}")

model = fabric.setup_module(torch.nn.Linear(10, 10))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
