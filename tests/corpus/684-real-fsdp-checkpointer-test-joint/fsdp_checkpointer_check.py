import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import FSDPStrategy
from torch import nn
from torch.distributed.fsdp.wrap import ModuleWrapPolicy
from torch.optim import Adam


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 32))

    def forward(self, x):
        return self.layers(x)


class SimpleModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = Backbone()
        self.adapter = nn.Linear(32, 32)
        self.head = nn.Linear(32, 4)

    def forward(self, x):
        return self.head(self.adapter(self.backbone(x)))


class CheckpointTestRunner:
    def create_normal_model(self, device="cuda" if torch.cuda.is_available() else "cpu"):
        model = SimpleModel().to(device)
        optimizer = Adam(model.parameters(), lr=0.001)
        return model, optimizer

    def create_fabric_fsdp_model(self, device="cuda" if torch.cuda.is_available() else "cpu"):
        world_size = torch.distributed.get_world_size() if torch.distributed.is_initialized() else 1
        num_devices = world_size if world_size > 1 else 2

        fabric = Fabric(
            devices=num_devices,
            strategy=FSDPStrategy(auto_wrap_policy=ModuleWrapPolicy({Backbone})),
        )
        fabric.launch()

        model = SimpleModel().to(device)
        optimizer = Adam(model.parameters(), lr=0.001)

        model, optimizer = fabric.setup(model, optimizer)
        return model, optimizer, fabric

    def train_model(self, model, optimizer, device="cpu", fabric=None):
        model.train()
        for _ in range(3):
            x = torch.randn(16, 32, device=device)
            loss = model(x).sum()
            if fabric is not None:
                fabric.backward(loss)
            else:
                loss.backward()
            optimizer.step()
            optimizer.zero_grad()


def test_fsdp_save_normal_load_with_fabric():
    runner = CheckpointTestRunner()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    fsdp_model, fsdp_optimizer, fsdp_fabric = runner.create_fabric_fsdp_model(device)
    runner.train_model(fsdp_model, fsdp_optimizer, device, fsdp_fabric)

    load_fabric = Fabric(devices=2, strategy="auto")
    load_fabric.launch()
    normal_model, normal_optimizer = runner.create_normal_model(device)
    normal_model, normal_optimizer = load_fabric.setup(normal_model, normal_optimizer)
