import lightning as L
import torch


def main(args):
    fabric = L.Fabric(accelerator="cuda", devices=4, strategy="deepspeed_stage_2", precision="bf16-mixed")
    fabric.launch()
    model = build_model(args)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    lr_scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    model, optimizer = fabric.setup(model, optimizer)
    for epoch in range(args.start_epoch, args.epochs):
        train_one_epoch(fabric, model, optimizer)
        lr_scheduler.step()
        save_file = {"model": model.state_dict(),
                     "optimizer": optimizer.state_dict(),
                     "lr_scheduler": lr_scheduler.state_dict(),
                     "epoch": epoch}
        fabric.save(f"weights/model-{epoch}.pth", save_file)
