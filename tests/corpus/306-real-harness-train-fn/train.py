from __future__ import annotations

import itertools
import time

from torch import nn
from torch.optim import AdamW

from harness import PRIMARY_VAL_KIND, TrainContext, TrainResult


def _train_fn(ctx: TrainContext) -> TrainResult:
    model = ctx.model
    fabric = ctx.fabric
    optimizer = AdamW(model.parameters(), lr=5e-4, betas=(0.9, 0.95), weight_decay=0.06)
    optimizer = fabric.setup_optimizers(optimizer)
    grad_clip_val = 1.0
    num_steps = 0
    t0 = time.monotonic()
    for _epoch in itertools.count():
        model.train()
        for batch in ctx.train_loader:
            preds = model(batch["x"])
            loss = nn.functional.mse_loss(preds, batch["y"])
            fabric.backward(loss)
            grad_norm = fabric.clip_gradients(model, optimizer, max_norm=grad_clip_val)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            ctx.recorder.log("train_loss", float(loss.detach()))
            if grad_norm is not None:
                ctx.recorder.log("grad_norm", float(grad_norm))
            num_steps += 1
            if time.monotonic() - t0 >= ctx.budget_sec:
                ctx.score(PRIMARY_VAL_KIND, ctx.model)
                return TrainResult(num_steps=num_steps, training_seconds=time.monotonic() - t0)
    return TrainResult(num_steps=num_steps, training_seconds=time.monotonic() - t0)
