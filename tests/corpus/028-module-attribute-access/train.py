import torch
import lightning.fabric as lf

fabric = lf.Fabric(strategy=lf.strategies.DeepSpeedStrategy(stage=3), devices=4)
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(7, 7))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
