from lightning.fabric import Fabric

import loop

if __name__ == "__main__":
    fabric = Fabric(strategy="deepspeed", devices=2)
    fabric.launch(loop.run, 3)
