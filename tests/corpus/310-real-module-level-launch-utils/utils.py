import math

import matplotlib.pyplot as plt
import torch
from lightning.fabric import Fabric

cuda = torch.cuda.is_available()
fabric = Fabric(accelerator="cuda", precision="bf16-mixed")
fabric.launch()


def get_device() -> str:
    return "cuda" if cuda else "cpu"


def set_seed(seed) -> None:
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)


def plot_images(mapper, n_cols=3, figsize=(10, 10)):
    n_rows = math.ceil(len(mapper) / n_cols)
    fig, axs = plt.subplots(n_rows, n_cols, figsize=figsize)
    for indx, lbl in enumerate(mapper):
        axs[indx // n_cols][indx % n_cols].imshow(mapper[lbl])
