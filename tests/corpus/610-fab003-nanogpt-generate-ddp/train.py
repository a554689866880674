import torch
import lightning as L
from model import GPT


def main():
    fabric = L.Fabric(accelerator="cuda", devices=4, strategy="ddp", precision="bf16-mixed")
    fabric.launch()
    model = GPT()
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4)
    model, optimizer = fabric.setup(model, optimizer)
    for iter_num in range(5000):
        logits, loss = model(x, y)
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if iter_num % 500 == 0 and fabric.global_rank == 0:
            model.eval()
            sample = model.generate(start_ids, max_new_tokens=100)
            model.train()


if __name__ == "__main__":
    main()
