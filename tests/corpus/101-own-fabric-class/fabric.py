class Fabric:
    """Tiny stand-in used by our unit tests."""

    def __init__(self, strategy="deepspeed"):
        self.strategy = strategy

    def setup_module(self, module):
        return module

    def setup_optimizers(self, *optimizers):
        return optimizers[0] if len(optimizers) == 1 else optimizers
