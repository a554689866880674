from functools import partial

import lightning as L
import torch
from lightning.fabric.strategies import FSDPStrategy
from torch.nn import TransformerEncoderLayer


def fit(fabric, model, optimizer, train_data, max_iters: int, grad_accum: int):
    model.train()
    for it, (input_ids, targets) in enumerate(train_data):
        if it >= max_iters:
            break
        logits = model(input_ids)
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())
        (loss / grad_accum).backward()
        if (it + 1) % grad_accum == 0:
            optimizer.step()
            optimizer.zero_grad()
            fabric.print(f"iter {it}: loss {loss.item():.4f}")


def main(devices: int = 4):
    policy = partial(torch.distributed.fsdp.wrap.transformer_auto_wrap_policy, transformer_layer_cls={TransformerEncoderLayer})
    strategy = FSDPStrategy(auto_wrap_policy=policy, activation_checkpointing_policy={TransformerEncoderLayer})
    fabric = L.Fabric(accelerator="cuda", devices=devices, strategy=strategy, precision="bf16-true")
    fabric.launch()
    with fabric.init_module():
        model = torch.nn.Sequential(torch.nn.Embedding(100, 64), TransformerEncoderLayer(64, 4), torch.nn.Linear(64, 100))
    model = fabric.setup_module(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    optimizer = fabric.setup_optimizers(optimizer)
    fit(fabric, model, optimizer, [], max_iters=100, grad_accum=4)


if __name__ == "__main__":
    main()
