import itertools

import hydra
import torch
import wandb
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf
from tqdm import tqdm


def _load_checkpoint(fabric, model, optimizer, scheduler, cfg) -> int:
    if not cfg.trainer.get("resume"):
        return 0
    state = {"model": model, "optimizer": optimizer, "scheduler": scheduler, "global_step": 0}
    fabric.load(cfg.trainer.resume, state)
    return state["global_step"]


@hydra.main(version_base=None, config_path="configs", config_name="pretrain")
def main(cfg: DictConfig):
    fabric = instantiate(cfg.fabric)
    fabric.launch()
    model = instantiate(cfg.module.network)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.module.optimizer.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=cfg.trainer.max_steps)
    model, optimizer, scheduler = fabric.setup(model, optimizer, scheduler=scheduler)
    loader = fabric.setup_dataloaders(instantiate(cfg.data.loader))
    global_step = _load_checkpoint(fabric, model, optimizer, scheduler, cfg)

    if fabric.is_global_zero:
        wandb.init(project="soundscape_ssl", config=OmegaConf.to_container(cfg, resolve=True))

    step_bar = tqdm(itertools.islice(loader, cfg.trainer.max_steps - global_step), disable=not fabric.is_global_zero)
    model.train()
    for batch in step_bar:
        with fabric.autocast():
            outputs = model(batch["spectrogram"])
            loss = outputs["loss"]
        fabric.backward(loss)
        fabric.clip_gradients(model, optimizer, max_norm=cfg.trainer.grad_clip)
        optimizer.step()
        optimizer.zero_grad()
        scheduler.step()
        global_step += 1


if __name__ == "__main__":
    main()
