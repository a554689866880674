import lightning as L


class LightningFabric:
    """A wrapper that forwards everything it does not define to the Fabric."""

    def __init__(self, devices, strategy, precision, num_nodes: int = 1):
        self._underlying_fabric = L.Fabric(devices=devices, strategy=strategy, precision=precision, num_nodes=num_nodes)
        self.strategy_name = str(strategy)

    def __getattr__(self, attr):
        if attr in self.__dict__:
            return getattr(self, attr)
        return getattr(self._underlying_fabric, attr)

    def setup(self, model):
        return self._underlying_fabric.setup(model)
