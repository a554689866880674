import lightning as L


def main():
    fabric = L.Fabric(accelerator="cuda", devices=2, strategy="deepspeed", precision="16-mixed")
    fabric.launch()
    generator, g_opt = fabric.setup(Generator(), make_opt("g"))
    discriminator, d_opt = fabric.setup(Discriminator(), make_opt("d"))
    for epoch in range(100):
        train_epoch(fabric, generator, discriminator, g_opt, d_opt)
        fabric.save(f"ckpt/epoch-{epoch}", {"generator": generator, "discriminator": discriminator, "epoch": epoch})
