import os
from typing import Any, Optional

from lightning.fabric import Fabric
from lightning.fabric.wrappers import _unwrap_objects


def save_checkpoint(fabric: Fabric, model: Any, optimizer: Any, epoch: int, filepath: str, scheduler: Optional[Any] = None) -> None:
    """Save a model checkpoint (rank 0 writes)."""
    if not fabric.is_global_zero:
        return

    checkpoint = {
        "model": _unwrap_objects(model).state_dict(),
        "optimizer": _unwrap_objects(optimizer).state_dict(),
        "epoch": epoch,
    }
    if scheduler is not None:
        checkpoint["scheduler"] = _unwrap_objects(scheduler).state_dict()
    os.makedirs(os.path.dirname(filepath), exist_ok=True)
    fabric.save(filepath, checkpoint)


def load_checkpoint(fabric: Fabric, model: Any, checkpoint_path: str) -> dict:
    if not os.path.exists(checkpoint_path):
        return {"epoch": 0}
    checkpoint = fabric.load(checkpoint_path)
    _unwrap_objects(model).load_state_dict(checkpoint["model"])
    return checkpoint
