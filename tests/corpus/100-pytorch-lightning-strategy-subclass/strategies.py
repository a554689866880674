from pytorch_lightning.strategies import DeepSpeedStrategy


class TunedDeepSpeed(DeepSpeedStrategy):
    def __init__(self):
        super().__init__(stage=2, allgather_bucket_size=5e8)
