import lightning as L
import torch


def log_samples(fabric, model, step):
    if not fabric.is_global_zero:
        return
    samples = model(torch.randn(4, 8))
    fabric.log("samples_mean", samples.mean().item(), step=step)
    fabric.barrier()


def run(fabric):
    model = torch.nn.Linear(8, 8)
    optimizer = torch.optim.Adam(model.parameters())
    model, optimizer = fabric.setup(model, optimizer)
    for step in range(100):
        loss = model(torch.randn(16, 8)).pow(2).mean()
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        if step % 10 == 0:
            log_samples(fabric, model, step)


if __name__ == "__main__":
    fabric = L.Fabric(accelerator="cpu", strategy="ddp_spawn", devices=4)
    fabric.launch(run)
