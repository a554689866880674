import hydra
import torch
from omegaconf import DictConfig


@hydra.main(config_path="conf", config_name="train", version_base=None)
def main(cfg: DictConfig) -> None:
    fabric = hydra.utils.instantiate(cfg.fabric)
    fabric.launch()
    model = fabric.setup_module(torch.nn.Linear(10, 10))
    optimizer = fabric.setup_optimizers(torch.optim.Adam(model.parameters()))


if __name__ == "__main__":
    main()
