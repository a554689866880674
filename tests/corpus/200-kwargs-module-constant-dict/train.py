import lightning as L
import torch

FABRIC_KWARGS = {"accelerator": "cuda", "devices": 4, "strategy": "deepspeed_stage_2", "precision": "bf16-mixed"}


def main():
    fabric = L.Fabric(**FABRIC_KWARGS)
    fabric.launch()
    model = torch.nn.Linear(32, 32)
    model = fabric.setup_module(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    optimizer = fabric.setup_optimizers(optimizer)


if __name__ == "__main__":
    main()
