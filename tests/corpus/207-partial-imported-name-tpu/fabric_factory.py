from functools import partial

from lightning.fabric import Fabric

TPUFabric = partial(Fabric, accelerator="tpu")
