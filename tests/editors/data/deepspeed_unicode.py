# Grüße aus München 🚀 — 漢字のコメント: non-ASCII before the flagged call
import torch
from lightning.fabric import Fabric

BANNER = "Größe 🚀 漢字 ü"
fabric = Fabric(strategy="deepspeed_stage_3")
fabric.launch()
model = torch.nn.Linear(4, 2)  # Modell für 🚀
model = fabric.setup_module(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
optimizer = fabric.setup_optimizers(optimizer)  # ü 🚀 漢字 after the call
print(BANNER)
