import lightning as L
import torch
from config import cfg
from model import Model


def validate(fabric, model, val_dataloader):
    model.eval()
    with torch.no_grad():
        for images, bboxes, gt_masks in val_dataloader:
            pred_masks, _ = model(images, bboxes)
    state_dict = model.model.state_dict()
    if fabric.global_rank == 0:
        torch.save(state_dict, "ckpt.pth")
    model.train()


def main(cfg):
    fabric = L.Fabric(accelerator="cuda", devices=cfg.devices, strategy="auto")
    fabric.launch()
    with fabric.device:
        model = Model(cfg)
        model.setup()
    optimizer = torch.optim.Adam(model.model.parameters(), lr=cfg.opt.learning_rate)
    model, optimizer = fabric.setup(model, optimizer)
    image_size = model.model.image_encoder.img_size
    validate(fabric, model, val_data)


if __name__ == "__main__":
    main(cfg)
