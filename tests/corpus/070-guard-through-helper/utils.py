from lightning.fabric.strategies import DeepSpeedStrategy, XLAStrategy


def needs_joint_setup(fabric) -> bool:
    return isinstance(fabric.strategy, (DeepSpeedStrategy, XLAStrategy))
