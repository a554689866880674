import lightning as L


def make_fabric():
    return L.Fabric(accelerator="tpu", devices=8)
