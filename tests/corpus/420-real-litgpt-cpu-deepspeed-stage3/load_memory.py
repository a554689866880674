import time

import lightning as L
import torch
from lit_gpt import GPT

checkpoint_path = "lit-gpt/checkpoints/EleutherAI/pythia-1b/lit_model.pth"
model_name = "pythia-1b"
checkpoints = torch.load(checkpoint_path)

fabric = L.Fabric(accelerator="cpu", precision="16", strategy="deepspeed_stage_3")
fabric.launch()

t0 = time.time()
with fabric.init_module():
    model = GPT.from_name(model_name)
    model.load_state_dict(checkpoints)
print(f"Time to load model: {time.time() - t0:.02f} seconds.")
model = fabric.setup(model)
