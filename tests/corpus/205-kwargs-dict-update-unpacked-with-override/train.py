import lightning as L
import torch

DEFAULTS = dict(accelerator="cuda", devices=4, strategy="ddp")


def main():
    overrides = {"strategy": "deepspeed_stage_2_offload"}
    fabric = L.Fabric(**{**DEFAULTS, **overrides})
    fabric.launch()
    model = torch.nn.Linear(32, 32)
    model = fabric.setup_module(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    optimizer = fabric.setup_optimizers(optimizer)


if __name__ == "__main__":
    main()
