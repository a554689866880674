import lightning as L
import torch
from lightning.fabric.strategies import ModelParallelStrategy


def parallelize(model, device_mesh):
    return apply_fsdp2(model, device_mesh)


def main():
    strategy = ModelParallelStrategy(parallelize_fn=parallelize, data_parallel_size=4, tensor_parallel_size=1)
    fabric = L.Fabric(accelerator="cuda", devices=4, strategy=strategy)
    fabric.launch()
    with fabric.init_module(empty_init=True):
        model = build_model()
    model = fabric.setup(model)
    optimizer = fabric.setup_optimizers(torch.optim.AdamW(model.parameters(), lr=1e-4))
    train(fabric, model, optimizer)
    fabric.save("ckpt", {"model": model}, filter={"model": lambda name, value: "lora" in name})
