"""Two models (GAN), each set up separately, then each optimizer, under DeepSpeed ZeRO-3 on CPU
(fabric-lsp runtime fixture). The correct joint form pairs each model with ITS optimizer:
``gen, opt_g = fabric.setup(gen, opt_g)`` and ``disc, opt_d = fabric.setup(disc, opt_d)``.
"""
import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import DDPStrategy, DeepSpeedStrategy


class CPUDeepSpeedStrategy(DeepSpeedStrategy):
    """Test-only: DeepSpeed on CPU (gloo, world size 1); skips only the CUDA guard."""

    def setup_environment(self) -> None:
        DDPStrategy.setup_environment(self)


fabric = Fabric(
    accelerator="cpu",
    devices=1,
    strategy=CPUDeepSpeedStrategy(stage=3, parallel_devices=[torch.device("cpu", 0)]),
)
fabric.launch()

torch.manual_seed(0)
gen = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 8))
disc = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
opt_g = torch.optim.SGD(gen.parameters(), lr=0.1)
opt_d = torch.optim.SGD(disc.parameters(), lr=0.1)
gen = fabric.setup_module(gen)
disc = fabric.setup_module(disc)
opt_g = fabric.setup_optimizers(opt_g)
opt_d = fabric.setup_optimizers(opt_d)

z = torch.randn(4, 4, device=fabric.device)
real = torch.randn(4, 8, device=fabric.device)
d_losses = []
for _ in range(2):  # two discriminator steps on one batch: the first must lower its loss
    d_loss = disc(gen(z).detach()).mean() - disc(real).mean()
    fabric.backward(d_loss, model=disc)  # several DeepSpeed engines: name the model
    opt_d.step()
    opt_d.zero_grad()
    d_losses.append(d_loss.item())
g_loss = -disc(gen(z)).mean()
fabric.backward(g_loss, model=gen)
opt_g.step()
opt_g.zero_grad()
print(f"d_losses={d_losses} g_loss={g_loss.item():.4f}")
assert d_losses[1] < d_losses[0], f"the discriminator step did not change it: {d_losses}"
print("RUNTIME-OK")
