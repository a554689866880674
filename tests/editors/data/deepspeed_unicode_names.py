# 🚀 ü 漢字 𠮷: non-ASCII identifiers (𠮷 is outside the BMP) before the call on the flagged line
import torch
from lightning.fabric import Fabric

fabric = Fabric(strategy="deepspeed_stage_3")
fabric.launch()
modèle = torch.nn.Linear(4, 2)
modèle = fabric.setup_module(modèle)
optimiseur_漢字𠮷 = torch.optim.AdamW(modèle.parameters(), lr=1e-4)
optimiseur_漢字𠮷 = fabric.setup_optimizers(optimiseur_漢字𠮷)  # 🚀 ü
