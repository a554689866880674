import lightning as L
import torch


@torch.no_grad()
def evaluate(fabric, model, loader):
    model.eval()
    predictions, targets = [], []
    for x, y in loader:
        predictions.append(model(x).argmax(dim=-1))
        targets.append(y)
    predictions = torch.cat(predictions)
    targets = torch.cat(targets)
    if fabric.is_global_zero:
        all_predictions = fabric.all_gather(predictions).flatten()
        all_targets = fabric.all_gather(targets).flatten()
        accuracy = (all_predictions == all_targets).float().mean()
        print(f"accuracy: {accuracy:.4f}")
    model.train()


def main():
    fabric = L.Fabric(accelerator="gpu", devices=8, strategy="ddp")
    fabric.launch()
    model = fabric.setup(torch.nn.Linear(128, 10))
    loader = fabric.setup_dataloaders(torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(512, 128), torch.randint(0, 10, (512,))), batch_size=32))
    evaluate(fabric, model, loader)


if __name__ == "__main__":
    main()
