from dataclasses import dataclass


@dataclass
class DeepSpeedStrategy:
    stage: int = 2
    offload: bool = False

    def as_string(self) -> str:
        return "ddp"
