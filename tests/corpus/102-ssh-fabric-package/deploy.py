from fabric import Connection

from remote import RemoteJob

fabric = Connection("gpu-node-01.internal", user="ml")
fabric.run("nvidia-smi")
job = RemoteJob(fabric, strategy="deepspeed")
job.setup_optimizers(["adamw"])
job.submit()
