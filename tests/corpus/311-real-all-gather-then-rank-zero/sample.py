import torch
from tqdm import trange


@torch.no_grad()
def generate_unconditional(fabric, pl_module, config, uncond_cfg):
    bs = uncond_cfg.batch_size
    tot_num_device = config.trainer.num_nodes * config.trainer.devices
    n_sampling_rounds = uncond_cfg.num_samples // (tot_num_device * bs)

    all_samples = []
    for _ in trange(n_sampling_rounds, disable=fabric.global_rank > 0):
        with fabric.autocast():
            out = pl_module.sample(n_samples=bs, num_steps=uncond_cfg.num_steps)
        out = fabric.all_gather(data=out)
        if fabric.global_rank == 0:
            if out.ndim == 3:
                out = out.view(-1, out.shape[-1])
            all_samples.append(out.cpu())
    fabric.barrier()
    return all_samples
