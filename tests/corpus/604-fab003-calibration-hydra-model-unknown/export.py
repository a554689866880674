import lightning as L
from hydra.utils import instantiate


def calibration_loop(fabric, model, dl):
    scores = [model.apply_thresholds(x) for x, _ in dl]
    return sum(scores) / len(scores)


def main(cfg):
    fabric = L.Fabric(**cfg.fabric)
    fabric.launch()
    model = instantiate(cfg.model)
    model_needs_calib = hasattr(model, "apply_thresholds")
    model = fabric.setup_module(model)
    if model_needs_calib:
        model.mark_forward_method("apply_thresholds")
    if model_needs_calib:
        thresholds = calibration_loop(fabric=fabric, model=model, dl=dl_calib)
        model.set_thresholds(thresholds)
