BASE_FABRIC = {"accelerator": "cuda", "devices": 8, "precision": "bf16-mixed", "strategy": "ddp"}
LARGE_MODEL_FABRIC = {**BASE_FABRIC, "strategy": "deepspeed_stage_3"}
