import lightning as L
import torch


def build_fabric(devices: int):
    fabric_kwargs = {"accelerator": "cuda", "strategy": "deepspeed", "precision": "16-mixed"}
    fabric_kwargs["devices"] = devices
    return L.Fabric(**fabric_kwargs)


def main():
    fabric = build_fabric(8)
    fabric.launch()
    model = torch.nn.Linear(32, 32)
    model = fabric.setup_module(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    optimizer = fabric.setup_optimizers(optimizer)


if __name__ == "__main__":
    main()
