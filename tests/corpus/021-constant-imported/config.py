STRATEGY = "deepspeed_stage_3"
DEVICES = 8
LR = 1e-4
