import torch
from torch import nn
import lightning as L


class Retriever(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedder = nn.Linear(64, 32)

    def forward(self, x):
        return self.embedder(x)

    def set_fabric(self, fabric):
        self.fabric = fabric

    def build_index(self, passages, batch_size):
        return torch.cat([self.embedder(p) for p in passages.split(batch_size)])

    def retrieve(self, query, index, k):
        scores = self.embedder(query) @ index.T
        return scores.topk(k).indices


def main(opt):
    fabric = L.Fabric(accelerator="cuda", devices=opt.devices, strategy="ddp")
    fabric.launch()
    model = Retriever()
    model = fabric.setup(model)
    model.module.set_fabric(fabric)
    model.mark_forward_method("retrieve")
    model.mark_forward_method("build_index")
    fabric.barrier()
    index = model.build_index(passages, opt.per_gpu_embedder_batch_size)
    hits = model.retrieve(query, index, 10)
    return hits
