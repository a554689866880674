import torch
from lightning import Fabric
from torch import nn
from transformers import AutoModelForCausalLM


class CasualModel(nn.Module):
    def __init__(self, model_cfg):
        super().__init__()
        self.model_cfg = model_cfg
        self.model = AutoModelForCausalLM.from_pretrained(model_cfg.repo_name)

    def forward(self, **kwargs):
        return self.model(**kwargs).logits

    def generate(self, **kwargs):
        return self.model.generate(**kwargs)


@torch.no_grad()
def generate(model, tokenizer, generation_config, example_prompt, device):
    generated = model.generate(
        input_ids=example_prompt["input_ids"].to(device),
        attention_mask=example_prompt["attention_mask"].to(device),
        generation_config=generation_config,
    )
    return tokenizer.decode(generated[0])


def main(fabric: Fabric, cfg):
    with fabric.init_module(empty_init=cfg.model.fabric_empty_init):
        model = CasualModel(model_cfg=cfg.model)
    model = fabric.setup_module(model)
    optimizer = fabric.setup_optimizers(torch.optim.AdamW(model.parameters(), lr=cfg.optim.lr))
    model.eval()
    gen_text = generate(model=model.module, tokenizer=tokenizer, generation_config=generation_config,
                        example_prompt=example_prompt, device=fabric.device)
    for k in range(cfg.steps):
        model.train()
        outputs = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
        if k > 0 and k % cfg.task.eval_interval == 0:
            model.eval()
            if fabric.is_global_zero:
                gen_text = generate(model=model, tokenizer=tokenizer, generation_config=generation_config,
                                    example_prompt=example_prompt, device=fabric.device)
