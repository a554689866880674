"""One real-update correctness and timing gate for two backends."""

from pathlib import Path

import hydra
import torch
from lightning.fabric import Fabric

from mvtracker.cli.train import fetch_optimizer, forward_batch_multi_view


def _run_backend(cfg, checkpoint, batch, backend):
    cfg.model.updateformer_backend = backend
    model = hydra.utils.instantiate(cfg.model).cuda().train()
    fabric = Fabric(devices=1, precision=cfg.trainer.precision)
    fabric.load_raw(str(checkpoint), model)
    optimizer, _ = fetch_optimizer(cfg.trainer, model)
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
        output = forward_batch_multi_view(batch=batch, model=model, cfg=cfg, step=1)
        loss = output["flow"]["loss"] + output["visibility"]["loss"]
    loss.backward()
    optimizer.step()
    return float(loss.detach())


def compare_real_update(cfg, checkpoint: Path, batch_cache: Path, candidate_backend: str = "fused"):
    batch = torch.load(batch_cache, map_location="cpu", weights_only=False)
    eager = _run_backend(cfg, checkpoint, batch, "eager")
    fused = _run_backend(cfg, checkpoint, batch, candidate_backend)
    return abs(fused - eager) / max(abs(eager), 1e-12)
