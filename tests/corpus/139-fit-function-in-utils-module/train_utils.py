import torch


def fit(fabric, model, lr=1e-3):
    model = fabric.setup_module(model)
    optimizer = fabric.setup_optimizers(torch.optim.AdamW(model.parameters(), lr=lr))
    return model, optimizer
