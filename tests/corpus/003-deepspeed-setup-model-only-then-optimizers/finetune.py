import torch
from lightning.fabric import Fabric


def finetune(model: torch.nn.Module, steps: int = 100) -> None:
    fabric = Fabric(strategy="deepspeed_stage_2_offload", devices=2, precision="16-mixed")
    fabric.launch()
    model = fabric.setup(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    opt = fabric.setup_optimizers(opt)
    for _ in range(steps):
        fabric.backward(model(torch.randn(2, 16, device=fabric.device)).mean())
        opt.step()
