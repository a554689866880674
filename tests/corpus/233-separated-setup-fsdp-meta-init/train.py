import lightning as L
import torch


def main():
    fabric = L.Fabric(accelerator="cuda", devices=4, strategy="fsdp")
    fabric.launch()
    with fabric.init_module(empty_init=True):
        model = torch.nn.Linear(32, 32)
    model = fabric.setup_module(model)
    optimizer = torch.optim.AdamW(model.parameters())
    optimizer = fabric.setup_optimizers(optimizer)


if __name__ == "__main__":
    main()
