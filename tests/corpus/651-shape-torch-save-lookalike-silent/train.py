import lightning as L
import torch


def main():
    fabric = L.Fabric(accelerator="cuda", devices=4, strategy="fsdp")
    fabric.launch()
    model, optimizer = fabric.setup(build_model(), build_optimizer())
    train(fabric, model, optimizer)
    state = {"model": model, "optimizer": optimizer}
    fabric.save("ckpt", state)
    if fabric.global_rank == 0:
        torch.save(model.state_dict(), "plain.pt")
        torch.save({"model": model.state_dict()}, "plain-dict.pt")
