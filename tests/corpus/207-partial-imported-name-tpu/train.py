import torch

from fabric_factory import TPUFabric


def main():
    fabric = TPUFabric(precision="bf16-true")
    fabric.launch(run)


def run(fabric):
    model = torch.nn.Linear(32, 32)
    model = fabric.setup_module(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    optimizer = fabric.setup_optimizers(optimizer)


if __name__ == "__main__":
    main()
