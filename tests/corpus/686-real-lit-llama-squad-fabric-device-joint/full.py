"""Full fine-tuning of LLaMA on SQuAD 2 (all layers updated)."""
import os
from functools import partial

import lightning as L
import torch
from lightning.fabric.strategies import FSDPStrategy
from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy

from lit_llama.model import Block, LLaMA, LLaMAConfig
from lit_llama.utils import save_model_checkpoint

devices = 2
learning_rate = 3e-5
micro_batch_size = 32
max_iters = 10 * 130000 // micro_batch_size // devices
block_size = 512


def main(
    data_dir: str = "data/squad2",
    pretrained_path: str = "checkpoints/lit-llama/7B/lit-llama.pth",
    out_dir: str = "out/full/squad2_trial1",
):
    auto_wrap_policy = partial(transformer_auto_wrap_policy, transformer_layer_cls={Block})
    strategy = FSDPStrategy(auto_wrap_policy=auto_wrap_policy, activation_checkpointing=Block)

    fabric = L.Fabric(accelerator="cuda", devices=devices, precision="bf16-mixed", strategy=strategy)
    fabric.launch()
    fabric.seed_everything(1337 + fabric.global_rank)

    if fabric.global_rank == 0:
        os.makedirs(out_dir, exist_ok=True)

    train_data = torch.load(os.path.join(data_dir, "train.pt"))

    config = LLaMAConfig.from_name("7B")
    config.block_size = block_size

    checkpoint = torch.load(pretrained_path)

    with fabric.device:
        torch.set_default_tensor_type(torch.HalfTensor)
        model = LLaMA(config).bfloat16()
        torch.set_default_tensor_type(torch.FloatTensor)
        model.load_state_dict(checkpoint, strict=False)

    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    model, optimizer = fabric.setup(model, optimizer)

    train(fabric, model, optimizer, train_data)
    save_model_checkpoint(fabric, model, os.path.join(out_dir, "lit-llama-full-finetuned.pth"))


def train(fabric, model, optimizer, train_data):
    model.train()
    for iter_num in range(max_iters):
        ix = torch.randint(len(train_data), (micro_batch_size,))
        x = torch.stack([train_data[i]["input_ids"] for i in ix]).type(torch.int64)
        y = torch.stack([train_data[i]["labels"] for i in ix]).type(torch.int64)
        x, y = fabric.to_device((x, y))
        logits = model(x)
        loss = torch.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1), ignore_index=-1)
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    from jsonargparse.cli import CLI

    CLI(main)
