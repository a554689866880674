import torch
from torch import nn
from lightning.fabric import Fabric


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(784, 32)
        self.dec = nn.Linear(16, 784)

    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, dim=-1)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        return self.dec(z), mu, logvar

    def reconstruct(self, x):
        mu, _ = self.enc(x).chunk(2, dim=-1)
        return torch.sigmoid(self.dec(mu))


def run(fabric):
    model = VAE()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model, optimizer = fabric.setup(model, optimizer)
    for x in loader:
        recon, mu, logvar = model(x)
        fabric.backward(nn.functional.mse_loss(recon, x))
        optimizer.step()
    images = model.reconstruct(x[:8])


if __name__ == "__main__":
    fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp_spawn")
    fabric.launch(run)
