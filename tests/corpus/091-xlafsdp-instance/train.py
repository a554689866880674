import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import XLAFSDPStrategy

strategy = XLAFSDPStrategy(auto_wrap_policy={torch.nn.TransformerEncoderLayer}, state_dict_type="full")
fabric = Fabric(accelerator="tpu", strategy=strategy)
fabric.launch()

model = fabric.setup_module(torch.nn.Linear(10, 10))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
