from lightning.fabric import Fabric
from lightning.fabric.loggers import CSVLogger


def main(hparams):
    fabric = Fabric(accelerator=hparams.accelerator, devices=hparams.devices, strategy=hparams.strategy,
                    loggers=[CSVLogger(hparams.log_dir)])
    fabric.launch()
    model, optimizer = fabric.setup(build_model(hparams), build_optimizer(hparams))
    train_loader = fabric.setup_dataloaders(build_loader(hparams))
    state = {"step_count": 0}
    for epoch in range(1, hparams.max_epochs + 1):
        metrics = train_epoch(fabric, model, optimizer, train_loader, state)
        if epoch != hparams.max_epochs:
            fabric.loggers[0].log_metrics(metrics, state["step_count"])
        # When using distributed training, use `fabric.save` to ensure the current process is allowed to save
        if hparams.always_save_checkpoint:
            fabric.save(model.state_dict(), "renet_cnn.pt")
