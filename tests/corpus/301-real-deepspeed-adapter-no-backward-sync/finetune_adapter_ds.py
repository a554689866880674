"""Instruction-tuning an adapter with DeepSpeed (modelled on a lit-llama fork)."""
import os
import time

import lightning as L
import torch
from lightning.fabric.strategies import DeepSpeedStrategy

import wandb
from lit_llama.adapter import LLaMA, LLaMAConfig, mark_only_adapter_as_trainable

out_dir = "out/adapter/full-training-ds"
eval_interval = 600
log_interval = 1
devices = 6
learning_rate = 9e-3
micro_batch_size = 8
gradient_accumulation_steps = 64 // devices // micro_batch_size
max_iters = 50000
ds_config = {
    "train_micro_batch_size_per_gpu": micro_batch_size,
    "gradient_accumulation_steps": gradient_accumulation_steps,
    "zero_optimization": {"stage": 2},
}


def main():
    fabric = L.Fabric(accelerator="cuda", devices=devices, strategy=DeepSpeedStrategy(config=ds_config), precision="bf16")
    fabric.launch()
    fabric.seed_everything(1337 + fabric.global_rank)

    if fabric.is_global_zero:
        wandb.init(project="llama-adapter")
    if fabric.global_rank == 0:
        os.makedirs(out_dir, exist_ok=True)

    train_data, val_data = load_datasets()
    with fabric.device:
        model = LLaMA(LLaMAConfig()).bfloat16()
    mark_only_adapter_as_trainable(model)

    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    model, optimizer = fabric.setup(model, optimizer)
    train(fabric, model, optimizer, train_data, val_data)

    checkpoint = {"model": model, "optimizer": optimizer}
    fabric.save(os.path.join(out_dir, "alpaca-adapter-finetuned.pt"), checkpoint)


def train(fabric, model, optimizer, train_data, val_data):
    step_count = 0
    checkpoint = {"model": model, "optimizer": optimizer}
    fabric.save(os.path.join(out_dir, "sanity.pt"), checkpoint)

    for iter_num in range(max_iters):
        t0 = time.time()
        input_ids, targets = get_batch(fabric, train_data)
        logits = model(input_ids)
        loss = loss_fn(logits, targets)
        with fabric.no_backward_sync(model, enabled=((iter_num + 1) % gradient_accumulation_steps != 0)):
            fabric.backward(loss / gradient_accumulation_steps)

        # fabric.clip_gradients(model, optimizer, clip_val=1.0)

        if (iter_num + 1) % gradient_accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
            step_count += 1
            if step_count % eval_interval == 0:
                val_loss = validate(fabric, model, val_data)
                fabric.print(f"step {iter_num}: val loss {val_loss:.4f}")
                fabric.barrier()

        if iter_num % log_interval == 0 and fabric.is_global_zero:
            wandb.log({"train_loss": loss.item(), "step": step_count, "dt": time.time() - t0})


@torch.no_grad()
def validate(fabric, model, val_data):
    model.eval()
    input_ids, targets = get_batch(fabric, val_data)
    loss = loss_fn(model(input_ids), targets)
    if fabric.is_global_zero:
        wandb.log({"val_loss": loss.item()}, commit=False)
    model.train()
    return loss.item()


def loss_fn(logits, targets):
    return torch.nn.functional.cross_entropy(logits[..., :-1, :].reshape(-1, logits.size(-1)), targets[..., 1:].reshape(-1))


def get_batch(fabric, data):
    ix = torch.randint(len(data), (micro_batch_size,))
    x = torch.stack([data[i]["input_ids"] for i in ix])
    y = torch.stack([data[i]["labels"] for i in ix])
    return fabric.to_device((x, y))


def load_datasets(data_dir="data/alpaca"):
    return torch.load(os.path.join(data_dir, "train.pt")), torch.load(os.path.join(data_dir, "test.pt"))


if __name__ == "__main__":
    main()
