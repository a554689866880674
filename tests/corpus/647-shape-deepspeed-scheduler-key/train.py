import lightning as L
import torch


def main():
    fabric = L.Fabric(accelerator="cuda", devices=4, strategy="deepspeed_stage_3", precision="bf16-true")
    fabric.launch()
    model = build_model()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1000)
    model, optimizer = fabric.setup(model, optimizer)
    step = train(fabric, model, optimizer, scheduler)
    fabric.save("checkpoints/last", {"model": model, "optimizer": optimizer, "lr_scheduler": scheduler, "step": step})
