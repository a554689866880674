import lightning
import torch
from torch import nn


class AudioDriveModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(80, 64)
        self.renderer = nn.Linear(64, 3)

    def forward(self, batch):
        return self.renderer(self.encoder(batch["audio"]))

    def forward_infer_test(self, batch):
        return {"rgb": self.renderer(self.encoder(batch["audio"]))}


def inference(driver_path, resume_path, device="cuda"):
    lightning_fabric = lightning.Fabric(accelerator=device, strategy="auto", devices=[0])
    lightning_fabric.launch()
    full_checkpoint = lightning_fabric.load(resume_path)
    model = AudioDriveModel()
    model.load_state_dict(full_checkpoint["model"])
    model = lightning_fabric.setup(model)
    model.eval()
    driver_dataloader = lightning_fabric.setup_dataloaders(torch.utils.data.DataLoader(dataset, batch_size=1))
    for batch in driver_dataloader:
        render_results = model.forward_infer_test(batch)
