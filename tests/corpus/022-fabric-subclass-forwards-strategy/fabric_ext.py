from lightning.fabric import Fabric


class DSFabric(Fabric):
    def __init__(self, devices=1, **kwargs):
        super().__init__(strategy="deepspeed", devices=devices, **kwargs)

    def log_rank_zero(self, msg):
        if self.global_rank == 0:
            print(msg)
