import time

import torch


def train(fabric, model, optimizer, train_dataloader, gradient_accumulation_iters: int, max_iters: int):
    step_count = 0
    for iter_num, batch in enumerate(train_dataloader):
        if iter_num >= max_iters:
            break
        is_accumulating = (iter_num + 1) % gradient_accumulation_iters != 0
        chosen = batch["chosen_input_ids"]
        chosen_mask = batch["chosen_attention_mask"]
        rejected = batch["rejected_input_ids"]
        rejected_mask = batch["rejected_attention_mask"]
        t0 = time.time()
        with fabric.no_backward_sync(model, enabled=is_accumulating):
            chosen_rewards = model(input_ids=chosen, attention_mask=chosen_mask, use_cache=False)
            rejected_rewards = model(input_ids=rejected, attention_mask=rejected_mask, use_cache=False)
            loss = -torch.nn.functional.logsigmoid(chosen_rewards - rejected_rewards).mean()
            fabric.backward(loss / gradient_accumulation_iters)
        if not is_accumulating:
            optimizer.step()
            optimizer.zero_grad()
            step_count += 1
        fabric.print(f"iter {iter_num}: loss {loss.item():.4f}, {(time.time() - t0) * 1000:.1f} ms")
