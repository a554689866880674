import os
import time
from abc import abstractmethod
from typing import List

import lightning as L
import torch
from lightning.fabric.loggers import CSVLogger, TensorBoardLogger


class EasyTrainer(object):
    def __init__(self, args):
        self.args = args
        self.gpus = args.gpus
        self.ckpt_shuffix = "ept"
        self.hparams = {"step": 0}
        time_str = time.strftime("%Y_%m_%d_%H_%M_%S", time.localtime())
        self.save_path = os.path.join(args.root_dir, args.name, time_str)
        tb_logger = TensorBoardLogger(root_dir=os.path.join(self.save_path, "tensorboard"))
        csv_logger = CSVLogger(root_dir=os.path.join(self.save_path, "csv"))
        self.fabric = L.Fabric(
            devices=self.gpus,
            loggers=[tb_logger, csv_logger],
        )

    @abstractmethod
    def build_models_and_optimizers(self, args) -> List:
        pass

    @abstractmethod
    def train_step(self, model, batch):
        pass

    def load_ckpt(self):
        args = self.args
        if args.ckpt_path.endswith(self.ckpt_shuffix):
            if args.only_load_model:
                self.fabric.load(args.ckpt_path, model=self.model)
            else:
                state = {
                    "model": self.model,
                    "optimizers": self.optimizers,
                    "hparams": self.hparams,
                }
                self.fabric.load(args.ckpt_path, state)
        else:
            self.fabric.load_raw(args.ckpt_path, model=self.model)

    def save_ckpt(self, name=None):
        if name is None:
            name = "model_{}.{}".format(self.hparams["step"], self.ckpt_shuffix)
        path = os.path.join(self.save_path, name)
        state = {
            "model": self.model,
            "optimizers": self.optimizers,
            "hparams": self.hparams,
        }
        self.fabric.save(os.path.join(self.save_path, path), state)

    def run(self):
        self.fabric.launch()
        args = self.args
        self.model, *self.optimizers = self.build_models_and_optimizers(args)
        self.model, *self.optimizers = self.fabric.setup(self.model, *self.optimizers)
        if args.ckpt_path is not None:
            self.load_ckpt()
        train_loader = self.fabric.setup_dataloaders(torch.utils.data.DataLoader(self.build_dataset(args)))
        while self.hparams["step"] < args.max_steps:
            for batch in train_loader:
                self.hparams["step"] += 1
                self.model.train()
                self.train_step(self.model, batch)
                if self.hparams["step"] % args.save_freq == 0:
                    self.save_ckpt()
