import lightning as L
import torch


def main():
    fabric = L.Fabric(accelerator="cuda", devices=8, strategy="fsdp", precision="bf16-mixed")
    fabric.launch()
    model = build_model()
    model = fabric.setup_module(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    optimizer = fabric.setup_optimizers(optimizer)
    fabric.load_raw("pretrained/model.pt", model)
    fabric.load_raw("pretrained/optimizer.pt", optimizer)
    train(fabric, model, optimizer)
