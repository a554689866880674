import lightning as L
import torch
from lightning.fabric.strategies import FSDPStrategy


def setup(devices: int = 1, precision: str = "bf16-mixed", resume: bool = False) -> None:
    if devices > 1:
        strategy = FSDPStrategy(
            auto_wrap_policy={torch.nn.TransformerEncoderLayer},
            activation_checkpointing_policy={torch.nn.TransformerEncoderLayer},
            state_dict_type="full",
            limit_all_gathers=True,
            cpu_offload=False,
        )
    else:
        strategy = "auto"
    fabric = L.Fabric(devices=devices, strategy=strategy, precision=precision)
    fabric.launch(main, resume)


def main(fabric: L.Fabric, resume: bool) -> None:
    with fabric.init_module(empty_init=True):
        model = torch.nn.TransformerEncoderLayer(d_model=256, nhead=4)
    model = fabric.setup(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4, weight_decay=0.1, betas=(0.9, 0.95))
    optimizer = fabric.setup_optimizers(optimizer)
    state = {"model": model, "optimizer": optimizer, "iter_num": 0}
    if resume:
        fabric.load("out/last.pth", state)


if __name__ == "__main__":
    from jsonargparse import CLI

    CLI(setup)
