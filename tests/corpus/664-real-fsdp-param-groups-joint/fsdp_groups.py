import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import FSDPStrategy
from torch.distributed.fsdp.wrap import always_wrap_policy


def test_setup_with_orig_params_and_multiple_param_groups():
    strategy = FSDPStrategy(auto_wrap_policy=always_wrap_policy)
    fabric = Fabric(accelerator="cuda", devices=2, strategy=strategy)
    fabric.launch()

    model = torch.nn.Sequential(
        torch.nn.Linear(10, 10, bias=False),
        torch.nn.Linear(5, 2, bias=False),
    )
    optimizer = torch.optim.Adam(
        [
            {"params": model[0].parameters(), "lr": 1e-2},
            {"params": model[1].parameters(), "lr": 1e-6},
        ]
    )

    # set up model and optimizer jointly
    wrapped_model, wrapped_optimizer = fabric.setup(model, optimizer)
    assert len(wrapped_optimizer.param_groups) == 2
