import os

from lightning.fabric import Fabric

from icl.util import parse_experiment_args


def main():

    model, tokenizer, splits, args = parse_experiment_args()

    train_dataloader = splits["train"]
    val_dataloader = splits["val"]

    lr = args.lr
    strategy = args.strategy

    precision = "16-mixed"
    accelerator = "gpu"
    max_epochs = 10

    model_name = model.config.get_name()
    checkpoint_dir = f"../checkpoints/{model_name}"
    last_ckpt_path = f"{checkpoint_dir}/last.ckpt"

    fabric = Fabric(
        accelerator=accelerator,
        strategy=strategy,
        precision=precision,
    )
    fabric.launch()

    optimizer = model.configure_optimizers(lr)
    model, optimizer = fabric.setup(model, optimizer)
    train_dataloader, val_dataloader = fabric.setup_dataloaders(train_dataloader, val_dataloader)

    state = {"model": model, "optimizer": optimizer, "epoch": 0}
    if os.path.exists(last_ckpt_path):
        print(f"Training from checkpoint: {last_ckpt_path}")
        fabric.load(last_ckpt_path, state)

    for epoch in range(state["epoch"], max_epochs):
        model.train()
        for batch in train_dataloader:
            loss = model(batch)
            fabric.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        state["epoch"] = epoch + 1
        fabric.save(f"{checkpoint_dir}/last.ckpt", state)


if __name__ == "__main__":
    main()
