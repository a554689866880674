import torch
from lightning.fabric.fabric import Fabric
from lightning.fabric.strategies.deepspeed import DeepSpeedStrategy

fabric = Fabric(strategy=DeepSpeedStrategy(config={"zero_optimization": {"stage": 2}}), devices=2)
fabric.launch()
net = torch.nn.Linear(4, 4)
net = fabric.setup_module(net)
sgd = torch.optim.SGD(net.parameters(), lr=0.1)
sgd = fabric.setup_optimizers(sgd)
