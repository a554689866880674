import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import DeepSpeedStrategy, XLAStrategy


def setup_training(fabric: Fabric, model, optimizer):
    if not isinstance(fabric.strategy, (DeepSpeedStrategy, XLAStrategy)):
        model = fabric.setup_module(model)
        optimizer = fabric.setup_optimizers(optimizer)
    else:
        model, optimizer = fabric.setup(model, optimizer)
    return model, optimizer


fabric = Fabric(strategy="deepspeed" if torch.cuda.device_count() > 4 else "ddp")
fabric.launch()
net = torch.nn.Linear(3, 3)
setup_training(fabric, net, torch.optim.SGD(net.parameters(), lr=0.1))
