import os

import hydra


def load_checkpoint(model, model_ema, checkpoint_path, optimizer=None, fabric=None):
    resume_epoch = None
    base_path = hydra.utils.get_original_cwd()
    if checkpoint_path.endswith(".ckpt"):
        checkpoint_path = os.path.join(base_path, checkpoint_path)
    else:
        checkpoint_path = os.path.join(base_path, checkpoint_path, "weight/latest.ckpt")
    if os.path.isfile(checkpoint_path):
        checkpoint = fabric.load(checkpoint_path)
        if isinstance(checkpoint, dict) and "state_dict" in checkpoint:
            model.load_state_dict(checkpoint["state_dict"])
            if model_ema is not None and "state_dict_ema" in checkpoint:
                model_ema.load_state_dict(checkpoint["state_dict_ema"])
            if optimizer is not None and "optimizer" in checkpoint:
                optimizer.load_state_dict(checkpoint["optimizer"])
            resume_epoch = checkpoint.get("epoch")
    return resume_epoch
