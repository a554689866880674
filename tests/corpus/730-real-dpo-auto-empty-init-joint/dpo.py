# Direct preference optimization on lit-gpt (adapted from the DPO reference trainer).
import time
from pathlib import Path

import lightning as L
import torch
import torch.nn.functional as F

from lit_gpt import GPT, Config
from lit_gpt.utils import check_valid_checkpoint_dir, load_checkpoint, num_parameters

devices = 1
gradient_accumulation_iters = 1
learning_rate = 5e-7
warmup_steps = 150
dpo_beta = 0.1

hparams = {k: v for k, v in locals().items() if isinstance(v, (int, float, str)) and not k.startswith("_")}


def setup(
    data_dir: Path = Path("data/alpaca"),
    checkpoint_dir: Path = Path("checkpoints/stabilityai/stablelm-base-alpha-3b"),
):
    fabric = L.Fabric(devices=devices, strategy="auto", precision="bf16-true")
    fabric.print(hparams)
    fabric.launch(main, checkpoint_dir)


def main(fabric, checkpoint_dir: Path):
    check_valid_checkpoint_dir(checkpoint_dir)
    fabric.seed_everything(0)

    config = Config.from_name(name=checkpoint_dir.name)
    checkpoint_path = checkpoint_dir / "lit_model.pth"
    with fabric.init_module(empty_init=(devices > 1)):
        policy_model = GPT(config)
        reference_model = GPT(config)

    fabric.print(f"Number of trainable parameters: {num_parameters(policy_model, requires_grad=True):,}")

    optimizer = torch.optim.RMSprop(policy_model.parameters(), lr=learning_rate)
    policy_model, optimizer = fabric.setup(policy_model, optimizer)
    reference_model = fabric.setup_module(reference_model)

    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lr_lambda=(lambda step: min(1.0, (step + 1) / (warmup_steps + 1)))
    )

    load_checkpoint(fabric, policy_model, checkpoint_path)
    fabric.seed_everything(0)

    train_time = time.perf_counter()
    train(fabric, policy_model, reference_model, optimizer, scheduler, [])
    fabric.print(f"Training time: {(time.perf_counter() - train_time):.2f} seconds.")


def train(fabric, policy_model, reference_model, optimizer, scheduler, train_dataloader):
    policy_model.train()
    reference_model.eval()
    for iter_count, batch in enumerate(train_dataloader, 1):
        is_accumulating = iter_count % gradient_accumulation_iters != 0
        with fabric.no_backward_sync(policy_model, enabled=is_accumulating):
            chosen = policy_model(batch["chosen_input_ids"]).float().mean()
            rejected = policy_model(batch["rejected_input_ids"]).float().mean()
            loss = -F.logsigmoid(dpo_beta * (chosen - rejected))
            fabric.backward(loss / gradient_accumulation_iters)
        if not is_accumulating:
            optimizer.step()
            optimizer.zero_grad()
            scheduler.step()


if __name__ == "__main__":
    torch.set_float32_matmul_precision("high")
    from jsonargparse import CLI

    CLI(setup)
