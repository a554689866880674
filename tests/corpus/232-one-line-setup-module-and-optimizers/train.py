import lightning as L
import torch


def main():
    fabric = L.Fabric(accelerator="cuda", devices=4, strategy="deepspeed_stage_2")
    fabric.launch()
    model = torch.nn.Linear(32, 32)
    optimizer = torch.optim.AdamW(model.parameters())
    model, optimizer = fabric.setup_module(model), fabric.setup_optimizers(optimizer)


if __name__ == "__main__":
    main()
