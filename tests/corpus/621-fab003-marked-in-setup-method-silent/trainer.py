import torch
import lightning as L
from model import GPT


class Trainer:
    def __init__(self):
        self.fabric = L.Fabric(accelerator="cuda", devices=4, strategy="fsdp")
        self.fabric.launch()

    def setup(self):
        self.model = self.fabric.setup_module(GPT())
        self.model.mark_forward_method("generate")
        self.optimizer = self.fabric.setup_optimizers(torch.optim.AdamW(self.model.parameters(), lr=1e-4))

    def sample(self, idx):
        return self.model.generate(idx, max_new_tokens=32)
