import torch
import lightning as L
from lightning.fabric.strategies import FSDPStrategy

from model import GPT, Block


def generate(model, idx, max_new_tokens):
    for _ in range(max_new_tokens):
        logits = model(idx)
        idx = torch.cat([idx, logits[:, -1:].argmax(-1)], dim=1)
    return idx


def generate_example(fabric, model, prompt):
    model.eval()
    with torch.no_grad():
        output = generate(model, prompt, max_new_tokens=20)
    fabric.print(output)
    model.train()


def main(fabric):
    model = GPT()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    model, optimizer = fabric.setup(model, optimizer)
    prompt = torch.zeros(1, 1, dtype=torch.long, device=fabric.device)
    for step in range(100):
        loss = model(prompt).sum()
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        if step % 10 == 0 and fabric.global_rank == 0:
            generate_example(fabric, model, prompt)


if __name__ == "__main__":
    strategy = FSDPStrategy(auto_wrap_policy={Block}, state_dict_type="full")
    fabric = L.Fabric(accelerator="cuda", devices=4, strategy=strategy, precision="bf16-true")
    fabric.launch(main)
