import lightning as L
import torch

BASE_FABRIC = {"accelerator": "cuda", "devices": 8, "strategy": "deepspeed_stage_2"}
SMALL_MODEL_FABRIC = {**BASE_FABRIC, "strategy": "ddp"}


def main():
    fabric = L.Fabric(**SMALL_MODEL_FABRIC)
    fabric.launch()
    model = torch.nn.Linear(32, 32)
    model = fabric.setup_module(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    optimizer = fabric.setup_optimizers(optimizer)


if __name__ == "__main__":
    main()
