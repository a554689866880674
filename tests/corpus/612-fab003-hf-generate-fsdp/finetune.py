import torch
import lightning as L
from transformers import AutoModelForCausalLM, AutoTokenizer


def main(args):
    fabric = L.Fabric(accelerator="cuda", devices=8, strategy="fsdp", precision="bf16-true")
    fabric.launch()
    with fabric.init_module():
        model = AutoModelForCausalLM.from_pretrained(args.model_id)
    model.train()
    model = fabric.setup_module(model)
    optimizer = fabric.setup_optimizers(torch.optim.AdamW(model.parameters(), lr=1e-5))
    tokenizer = AutoTokenizer.from_pretrained(args.model_id)
    for step, batch in enumerate(dataloader):
        loss = model(**batch).loss
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        if step % 100 == 0:
            out = model.generate(**tokenizer("Hello", return_tensors="pt").to(fabric.device), max_new_tokens=20)
