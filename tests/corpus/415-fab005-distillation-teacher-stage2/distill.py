import lightning as L
import torch
import torch.nn.functional as F


def distill(fabric, student, teacher, optimizer, loader, temperature: float = 2.0):
    teacher.eval()
    for x, y in loader:
        with torch.no_grad():
            t_logits = teacher(x)
        s_logits = student(x)
        kd = F.kl_div(F.log_softmax(s_logits / temperature, -1), F.softmax(t_logits / temperature, -1), reduction="batchmean")
        loss = kd + F.cross_entropy(s_logits, y)
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()


def main():
    fabric = L.Fabric(accelerator="cuda", devices=4, strategy="deepspeed", precision="16-mixed")
    fabric.launch()
    teacher = torch.nn.Linear(128, 10)
    student = torch.nn.Linear(128, 10)
    optimizer = torch.optim.Adam(student.parameters(), lr=1e-3)
    teacher = fabric.setup_module(teacher)
    student, optimizer = fabric.setup(student, optimizer)
    distill(fabric, student, teacher, optimizer, [])


if __name__ == "__main__":
    main()
