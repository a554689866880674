import math
from dataclasses import dataclass
from typing import Optional

import lightning as L
import torch
from lightning.fabric.strategies import FSDPStrategy

from data.dataloader import ChunkedDataLoader
from models.modeling_qwen import Qwen2DecoderLayer


@dataclass
class QwenTrainConfig:
    num_devices: int = 1
    precision: Optional[str] = None
    lr_max: float = 3e-4
    grad_clip: float = 1.0
    micro_batch_size: int = 8
    gradient_accumulation_steps: int = 8


class QwenTrainer:
    def __init__(self, conf: QwenTrainConfig, model, dataset):
        self.model = model
        self.grad_clip = conf.grad_clip
        self.micro_batch_size = conf.micro_batch_size
        self.gradient_accumulation_steps = conf.gradient_accumulation_steps
        self.iter_current = 0
        self.optim = torch.optim.AdamW(model.parameters(), lr=conf.lr_max)
        if conf.num_devices > 1:
            self.strategy = FSDPStrategy(auto_wrap_policy={Qwen2DecoderLayer}, state_dict_type="full")
        else:
            self.strategy = "auto"
        self.fabric = L.Fabric(devices=conf.num_devices, precision=conf.precision, strategy=self.strategy)
        self.dataset = dataset

    def train(self):
        fabric = self.fabric
        fabric.launch()
        fabric.seed_everything(3407)
        model = fabric.setup_module(self.model)
        optim = fabric.setup_optimizers(self.optim)
        dataloader = fabric.setup_dataloaders(ChunkedDataLoader(self.dataset, self.micro_batch_size))

        for data in dataloader:
            input_ids, target_ids = data[:, :-1], data[:, 1:]
            is_accumulating = (self.iter_current + 1) % self.gradient_accumulation_steps == 0
            with fabric.no_backward_sync(model, enabled=is_accumulating):
                output_logits = model.forward(input_ids)
                with fabric.autocast():
                    loss = torch.nn.functional.cross_entropy(output_logits, target_ids)
                fabric.backward(loss / self.gradient_accumulation_steps)
            if not is_accumulating:
                fabric.clip_gradients(model, optim, self.grad_clip)
                optim.step()
                optim.zero_grad()
            self.iter_current += 1

    def get_lr(self):
        return 0.5 * (1.0 + math.cos(math.pi * self.iter_current))
