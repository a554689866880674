import time
from dataclasses import dataclass
from functools import partial

import lightning as L
import torch
from lightning.fabric.strategies import DDPStrategy, FSDPStrategy
from lightning.pytorch.loggers import WandbLogger

from lit_gpt.model import GPT, Block, Config


@dataclass
class CLISettings:
    run_name: str = "default-run"
    out_dir: str = "output"
    model_name: str = "tiny-llama-1.1b"
    fabric_strategy: str = "fsdp"
    fabric_precision: str = "bf16-true"
    devices: int = 4
    num_nodes: int = 1
    learning_rate: float = 4e-4
    weight_decay: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.95
    adamw_eps: float = 1e-8
    compile_model: bool = False
    no_weight_decay_for_bias_and_norm_params: bool = False
    seed: int = 1337


def init_weights(module, n_layer, n_embd):
    if isinstance(module, torch.nn.Linear):
        torch.nn.init.normal_(module.weight, std=(2 / 5 / n_embd) ** 0.5 / n_layer)


def startup(cfg: CLISettings):
    logger = WandbLogger(project="pretrain", name=cfg.run_name, save_dir=cfg.out_dir)

    if cfg.fabric_strategy == "fsdp":
        strategy = FSDPStrategy(
            auto_wrap_policy={Block},
            activation_checkpointing_policy={Block},
            state_dict_type="full",
            sharding_strategy="HYBRID_SHARD",
        )
    elif cfg.fabric_strategy == "ddp":
        strategy = DDPStrategy()
    else:
        raise ValueError(f"`fabric_strategy={cfg.fabric_strategy}` is not a valid option.")

    fabric = L.Fabric(
        devices=cfg.devices,
        strategy=strategy,
        precision=cfg.fabric_precision,
        loggers=[logger],
        num_nodes=cfg.num_nodes,
    )
    fabric.launch()
    main(fabric, cfg)


def main(fabric: L.Fabric, cfg: CLISettings):
    model_config = Config.from_name(cfg.model_name)
    fabric.seed_everything(cfg.seed)

    t0 = time.time()
    with fabric.init_module(empty_init=False):
        model = GPT(model_config)
        model.apply(partial(init_weights, n_layer=model_config.n_layer, n_embd=model_config.n_embd))
    fabric.print(f"Time to instantiate model: {time.time() - t0:.02f} seconds.")

    if cfg.compile_model:
        model = torch.compile(model)

    model = fabric.setup(model)

    if cfg.no_weight_decay_for_bias_and_norm_params:
        wd_params, no_wd_params = [], []
        for name, param in model.named_parameters():
            (no_wd_params if "norm" in name or "bias" in name else wd_params).append(param)
        param_groups = []
        if wd_params:
            param_groups.append({"params": wd_params})
        if no_wd_params:
            param_groups.append({"params": no_wd_params, "weight_decay": 0.0})
        optimizer = torch.optim.AdamW(
            param_groups, lr=cfg.learning_rate, weight_decay=cfg.weight_decay,
            betas=(cfg.beta1, cfg.beta2), foreach=False, eps=cfg.adamw_eps,
        )
    else:
        optimizer = torch.optim.AdamW(
            model.parameters(), lr=cfg.learning_rate, weight_decay=cfg.weight_decay,
            betas=(cfg.beta1, cfg.beta2), foreach=False, eps=cfg.adamw_eps,
        )
    optimizer = fabric.setup_optimizers(optimizer)

    state = {"model": model, "optimizer": optimizer, "iter_num": 0, "step_count": 0}
    train(fabric, state)


def train(fabric, state):
    model, optimizer = state["model"], state["optimizer"]
    x = torch.randint(0, 100, (2, 16), device=fabric.device)
    loss = model(x).float().mean()
    fabric.backward(loss)
    optimizer.step()
    optimizer.zero_grad()


if __name__ == "__main__":
    startup(CLISettings())
