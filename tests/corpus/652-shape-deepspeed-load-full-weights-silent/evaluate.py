import lightning as L
from lightning.fabric.strategies import DeepSpeedStrategy


def main():
    strategy = DeepSpeedStrategy(stage=3, load_full_weights=True)
    fabric = L.Fabric(accelerator="cuda", devices=4, strategy=strategy, precision="bf16-true")
    fabric.launch()
    model = fabric.setup(build_model())
    checkpoint = fabric.load("consolidated.pt")
    model.load_state_dict(checkpoint["model"])
    evaluate(fabric, model)
