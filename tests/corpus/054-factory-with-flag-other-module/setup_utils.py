from lightning.fabric import Fabric
from lightning.fabric.strategies import DDPStrategy, XLAStrategy


def build_fabric(use_tpu: bool) -> Fabric:
    if use_tpu:
        return Fabric(accelerator="tpu", strategy=XLAStrategy())
    return Fabric(accelerator="cuda", strategy=DDPStrategy(), devices=4)
