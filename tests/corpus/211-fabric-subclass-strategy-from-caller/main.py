from lite import TrainerLite

if __name__ == "__main__":
    TrainerLite(accelerator="cuda", devices=2, strategy="deepspeed_stage_3").run({"width": 64, "steps": 100})
