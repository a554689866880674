import torch
from lightning.fabric import Fabric


def teacher_phase():
    fabric = Fabric(strategy="deepspeed_stage_3", devices=8)
    fabric.launch()
    model = torch.nn.Linear(10, 10)
    optimizer = torch.optim.AdamW(model.parameters())
    model, optimizer = fabric.setup(model, optimizer)
    return model


def student_phase():
    fabric = Fabric(strategy="fsdp", devices=8)
    fabric.launch()
    student = fabric.setup_module(torch.nn.Linear(10, 10))
    optimizer = fabric.setup_optimizers(torch.optim.AdamW(student.parameters()))
    return student, optimizer
