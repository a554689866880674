from lightning.fabric import Fabric


def main():
    fabric = Fabric(accelerator="auto", devices=1)
    model, optimizer = fabric.setup(build_model(), build_optimizer())
    train(fabric, model, optimizer)
    fabric.save("adapter.pt", {"model": model}, filter=lambda name, param: "adapter" in name)
