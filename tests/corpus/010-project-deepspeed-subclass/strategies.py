from lightning.fabric.strategies import DeepSpeedStrategy


class ClusterDeepSpeed(DeepSpeedStrategy):
    """DeepSpeed with our cluster's defaults."""

    def __init__(self, **kwargs):
        kwargs.setdefault("stage", 3)
        super().__init__(**kwargs)
