from dataclasses import dataclass


@dataclass
class TrainConfig:
    strategy: str = "deepspeed_stage_2"
    devices: int = 8
    lr: float = 6e-4
