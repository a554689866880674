import os

import lightning as L
import torch
from lit_llama.lora import lora, lora_state_dict, mark_only_lora_as_trainable
from lit_llama.model import LLaMA, LLaMAConfig

devices = 2
learning_rate = 3e-5
eval_interval = 100
max_iters = 1000


def main(pretrained_path: str = "checkpoints/lit-llama/7B/lit-llama.pth", out_dir: str = "out/lora/squad2"):
    fabric = L.Fabric(accelerator="cuda", devices=devices, precision="bf16-true", strategy="ddp")
    fabric.launch()
    fabric.seed_everything(1337 + fabric.global_rank)
    if fabric.global_rank == 0:
        os.makedirs(out_dir, exist_ok=True)

    checkpoint = torch.load(pretrained_path)
    with fabric.init_module(), lora(r=16, alpha=16, dropout=0.05, enabled=True):
        model = LLaMA(LLaMAConfig.from_name("7B"))
        model.load_state_dict(checkpoint, strict=False)
    mark_only_lora_as_trainable(model)

    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    model, optimizer = fabric.setup(model, optimizer)
    train(fabric, model, optimizer, out_dir)

    # Save the final LoRA checkpoint at the end of training
    checkpoint = lora_state_dict(model)
    fabric.save(os.path.join(out_dir, "lit-llama-lora-finetuned.pth"), checkpoint)


def train(fabric: L.Fabric, model: torch.nn.Module, optimizer: torch.optim.Optimizer, out_dir: str) -> None:
    step_count = 0
    for iter_num in range(max_iters):
        loss = model(torch.zeros(1, 8, dtype=torch.long, device=fabric.device)).sum()
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        step_count += 1
        if step_count % eval_interval == 0:
            checkpoint = lora_state_dict(model)
            fabric.save(os.path.join(out_dir, f"iter-{iter_num}-ckpt.pth"), checkpoint)
            fabric.barrier()


if __name__ == "__main__":
    from jsonargparse.cli import CLI

    CLI(main)
