from lightning.fabric.strategies import DeepSpeedStrategy


class OffloadDeepSpeed(DeepSpeedStrategy):
    def __init__(self):
        super().__init__(stage=3, offload_optimizer=True, offload_parameters=True)


def strategy_from_config(cfg):
    if cfg.get("offload", False):
        return OffloadDeepSpeed()
    return "ddp"
