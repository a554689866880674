import torch
from lightning.fabric import Fabric

fabric = Fabric(strategy="deepspeed", devices=8)


def finetune_head(fabric, head):
    head = fabric.setup_module(head)
    return head, fabric.setup_optimizers(torch.optim.SGD(head.parameters(), lr=0.1))


if __name__ == "__main__":
    fabric.launch()
    model = torch.nn.Linear(4, 4)
    model, opt = fabric.setup(model, torch.optim.Adam(model.parameters()))
    ddp = Fabric(strategy="ddp", devices=2)
    ddp.launch()
    finetune_head(ddp, torch.nn.Linear(4, 2))
