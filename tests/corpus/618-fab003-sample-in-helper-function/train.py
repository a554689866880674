import torch
import lightning as L
from model import GPT


@torch.no_grad()
def sample(fabric, model, n=3):
    model.eval()
    for _ in range(n):
        fabric.print(model.generate(torch.zeros((1, 1), dtype=torch.long, device=fabric.device), 64))
    model.train()


def main():
    fabric = L.Fabric(accelerator="cuda", devices=2, strategy="ddp_find_unused_parameters_true")
    fabric.launch()
    model = GPT()
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4)
    model, optimizer = fabric.setup(model, optimizer)
    for epoch in range(10):
        logits, loss = model(x, y)
        fabric.backward(loss)
        optimizer.step()
        sample(fabric, model)


main()
