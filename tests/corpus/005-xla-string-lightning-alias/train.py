import torch
import lightning as L


def run():
    fabric = L.Fabric(accelerator="tpu", strategy="xla")
    fabric.launch()
    model = torch.nn.Linear(10, 2)
    model = fabric.setup_module(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    optimizer = fabric.setup_optimizers(optimizer)
    return model, optimizer


run()
