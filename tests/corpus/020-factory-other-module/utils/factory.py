from lightning.fabric import Fabric


def build_fabric(devices=4):
    fabric = Fabric(strategy="deepspeed_stage_2", devices=devices, precision="bf16-mixed")
    fabric.launch()
    return fabric
