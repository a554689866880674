import lightning as L


def build_fabric(num_devices: int = 1) -> L.Fabric:
    return L.Fabric(accelerator="cuda", devices=num_devices, strategy="ddp", precision="16-mixed")
