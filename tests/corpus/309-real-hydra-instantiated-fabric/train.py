import hydra
import torch
from hydra.utils import instantiate
from lightning import Fabric
from omegaconf import DictConfig

from train_utils.train_util import TrainBatchProcessStrategy, create_optimizer_v2


def get_fabric(config) -> Fabric:
    if torch.cuda.is_bf16_supported():
        fabric = instantiate(config.fabric, precision="bf16-mixed")
    else:
        fabric = instantiate(config.fabric)
    fabric.seed_everything(config.exp.seed)
    fabric.launch()
    return fabric


@hydra.main(version_base=None, config_path="../configs", config_name="train_config")
def main(config: DictConfig):
    fabric = get_fabric(config)
    model = instantiate(config.model, _convert_="all")
    optimizer = create_optimizer_v2(model, **config.exp.optimizer)
    model, optimizer = fabric.setup(model, optimizer)

    train_batch_processor = TrainBatchProcessStrategy(model)
    current_step = 0
    while current_step < config.exp.training_steps:
        model.train()
        optimizer.zero_grad()
        for batch, dataloader in config.train_iterator:
            loss = train_batch_processor(batch, dataloader).loss
            fabric.backward(loss)
        optimizer.step()
        current_step += 1


if __name__ == "__main__":
    main()
