import torch
from lightning.fabric import Fabric


def sample(model, x):
    with torch.no_grad():
        return model(x)


fabric = Fabric(accelerator="cuda", devices=4, strategy="ddp")
fabric.launch()
model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.GELU(), torch.nn.Linear(16, 16))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer = fabric.setup(model, optimizer)
x = torch.randn(2, 16, device=fabric.device)
loss = model(x).sum()
fabric.backward(loss)
optimizer.step()
if fabric.global_rank == 0:
    print(sample(model, x))
    torch.save(model.state_dict(), "model.pt")
fabric.barrier()
