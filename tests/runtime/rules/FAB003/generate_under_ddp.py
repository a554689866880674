"""FAB003 INVALID: ``model.generate(...)`` on a model set up under DDP (CPU, gloo, one process).
DDP wraps the module, so Fabric wraps ``generate`` with its call tracker; ``generate`` calls
``self(...)``, a forward hook fires, and Lightning raises after the method returns.
"""
import torch
from lightning.fabric import Fabric


class TinyLM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(16, 8)
        self.head = torch.nn.Linear(8, 16)

    def forward(self, idx):
        return self.head(self.embed(idx))

    @torch.no_grad()
    def generate(self, idx, steps):
        for _ in range(steps):
            logits = self(idx)[:, -1, :]
            idx = torch.cat([idx, logits.argmax(-1, keepdim=True)], dim=1)
        return idx


fabric = Fabric(accelerator="cpu", devices=1, strategy="ddp")
fabric.launch()
torch.manual_seed(0)
model = TinyLM()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
model, optimizer = fabric.setup(model, optimizer)

x = torch.randint(0, 16, (4, 6), device=fabric.device)
losses = []
for _ in range(2):  # two steps on one batch: the first step must lower the loss
    loss = torch.nn.functional.cross_entropy(model(x[:, :-1]).reshape(-1, 16), x[:, 1:].reshape(-1))
    fabric.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
    losses.append(loss.item())
assert losses[1] < losses[0], f"the optimizer step did not change the model: {losses}"
sample = model.generate(x[:1, :2], steps=3)
assert sample.shape == (1, 5), sample.shape
print(f"RUNTIME-OK rank={fabric.global_rank}")
