import torch
from lightning.fabric import Fabric
from torch.optim.swa_utils import AveragedModel, get_ema_avg_fn

from frm import FRMWrapper

fabric = Fabric(precision="bf16-mixed")


def setup(config):
    model = FRMWrapper(config)
    ema_model = AveragedModel(model, avg_fn=get_ema_avg_fn(config.ema_decay))
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.opt.lr)
    model, optimizer = fabric.setup(torch.compile(model), optimizer)
    return model, optimizer, ema_model


def evaluate(model, dataloader):
    model = model.eval()
    for batch in dataloader:
        carry = model.initial_carry(batch)
        with torch.no_grad():
            output = model(carry, batch)
    model.train()


def run(config):
    model, optimizer, ema_model = setup(config)
    for batch in train_data:
        carry = model.initial_carry(batch)
        outputs = model(carry=carry, batch=batch)
        fabric.backward(outputs["logits"].float().pow(2).mean())
        optimizer.step()
        optimizer.zero_grad()
        ema_model.update_parameters(model._original_module)
    evaluate(model, test_data)


if __name__ == "__main__":
    fabric.launch()
    run(config)
