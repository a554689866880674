import os
from functools import partial

import lightning as L
import torch
from lightning.fabric.strategies import FSDPStrategy
from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy

from lit_llama.model import Block, LLaMA, LLaMAConfig

out_dir = "out"
learning_rate = 3e-4
batch_size = 2
max_iters = 50000 * 3 // 4 // batch_size
weight_decay = 0.0
block_size = 256


def main() -> None:
    auto_wrap_policy = partial(transformer_auto_wrap_policy, transformer_layer_cls={Block})
    strategy = FSDPStrategy(auto_wrap_policy=auto_wrap_policy, activation_checkpointing=Block)

    fabric = L.Fabric(accelerator="cuda", devices=4, precision="bf16-mixed", strategy=strategy)
    fabric.launch()
    fabric.seed_everything(1337 + fabric.global_rank)

    if fabric.global_rank == 0:
        os.makedirs(out_dir, exist_ok=True)

    train_data, val_data = load_datasets()

    config = LLaMAConfig.from_name("7B")
    config.block_size = block_size

    with fabric.init_module(empty_init=True):
        model = LLaMA(config)

    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=weight_decay)
    model, optimizer = fabric.setup(model, optimizer)

    fabric.load_raw("checkpoints/lit-llama/7B/state_dict.pth", model)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, max_iters, last_epoch=-1)

    train(fabric, model, optimizer, scheduler, train_data, val_data)


def train(fabric, model, optimizer, scheduler, train_data, val_data) -> None:
    for iter_num in range(max_iters):
        input_ids, targets = get_batch(fabric, train_data)
        logits = model(input_ids)
        loss = torch.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        fabric.backward(loss)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()


def get_batch(fabric, data):
    ix = torch.randint(len(data), (batch_size,))
    x = torch.stack([data[i]["input_ids"] for i in ix]).type(torch.int64)
    y = torch.stack([data[i]["labels"] for i in ix]).type(torch.int64)
    return fabric.to_device((x, y))


def load_datasets(data_dir: str = "data/alpaca"):
    return torch.load(os.path.join(data_dir, "train.pt")), torch.load(os.path.join(data_dir, "test.pt"))


if __name__ == "__main__":
    torch.set_float32_matmul_precision("high")
    main()
