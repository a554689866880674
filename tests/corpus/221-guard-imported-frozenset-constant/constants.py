NEEDS_JOINT_SETUP = frozenset({"deepspeed", "deepspeed_stage_2"})
