import argparse
import time
from pathlib import Path

import lightning as L
import torch
from lightning.fabric.strategies import FSDPStrategy
from lit_gpt.utils import get_default_supported_precision, num_parameters
from model import Block, TransEncoder
from tokenizer import MusicTokenizerWithStyle


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_dir", type=str, required=True)
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--max_steps", type=int, default=100000)
    parser.add_argument("--devices", type=int, default=8, help="Number of GPUs")
    parser.add_argument("--out_dir", type=str, default="workdir")
    return parser.parse_args()


args = parse_args()
out_dir = Path(args.out_dir) / "music_diffusion"
learning_rate = 2e-4
weight_decay = 1e-1
beta1 = 0.9
beta2 = 0.95
grad_clip = 1.0


def setup(devices: int = args.devices, precision: str = None, resume: bool = False):
    precision = precision or get_default_supported_precision(training=True)
    strategy = (
        FSDPStrategy(auto_wrap_policy={Block}, state_dict_type="full", limit_all_gathers=True, cpu_offload=False)
        if devices > 1
        else "auto"
    )
    fabric = L.Fabric(devices=devices, strategy=strategy, precision=precision)
    fabric.print(f"Training with {devices} GPUs")
    main(fabric, resume)


def main(fabric, resume):
    tokenizer = MusicTokenizerWithStyle()
    fabric.seed_everything(3407)
    model = TransEncoder(vocab_size=tokenizer.vocab_size)
    fabric.print(f"Model initialized with {num_parameters(model):,} parameters")

    model = fabric.setup(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=weight_decay, betas=(beta1, beta2))
    optimizer = fabric.setup_optimizers(optimizer)

    state = {"model": model, "optimizer": optimizer, "iter_num": 0, "step_count": 0}
    if resume:
        checkpoint_path = sorted(out_dir.glob("*.pth"))
        if checkpoint_path:
            fabric.load(checkpoint_path[-1], state)

    train_time = time.perf_counter()
    train(fabric, state)
    fabric.print(f"Training time: {(time.perf_counter() - train_time):.2f}s")


def train(fabric, state):
    model = state["model"]
    optimizer = state["optimizer"]
    for _ in range(args.max_steps):
        input_ids = torch.randint(0, 100, (2, 16), device=fabric.device)
        loss = model(input_ids).float().mean()
        fabric.backward(loss)
        fabric.clip_gradients(model, optimizer, max_norm=grad_clip)
        optimizer.step()
        optimizer.zero_grad()
        state["iter_num"] += 1


if __name__ == "__main__":
    torch.set_float32_matmul_precision("high")
    setup()
