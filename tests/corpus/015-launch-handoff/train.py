import torch
import lightning as L


def main(fabric):
    model = torch.nn.Linear(64, 64)
    model = fabric.setup_module(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    optimizer = fabric.setup_optimizers(optimizer)
    for step in range(100):
        loss = model(torch.randn(8, 64, device=fabric.device)).pow(2).mean()
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    fabric = L.Fabric(accelerator="cuda", devices=2, strategy="deepspeed_stage_2")
    fabric.launch(main)
