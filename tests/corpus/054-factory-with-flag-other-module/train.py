import sys

import torch

from setup_utils import build_fabric

fabric = build_fabric(use_tpu="--tpu" in sys.argv)
fabric.launch()
model = fabric.setup_module(torch.nn.Linear(10, 10))
optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))
