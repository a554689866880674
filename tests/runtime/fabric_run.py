"""``fabric run`` for the runtime tests: ``lightning.fabric.cli.main``, which the ``fabric run`` command
calls once click has parsed its options (click is not in the runtime venv). It sets ``LT_CLI_USED``,
``LT_ACCELERATOR``, ``LT_STRATEGY``, ``LT_DEVICES``, ``LT_NUM_NODES`` and starts the script under torchrun.

    python fabric_run.py ACCELERATOR STRATEGY DEVICES MAIN_PORT SCRIPT [SCRIPT_ARGS...]
"""

import sys
from argparse import Namespace

from lightning.fabric.cli import main

accelerator, strategy, devices, port, script, *script_args = sys.argv[1:]
options = Namespace(
    accelerator=accelerator,
    strategy=strategy,
    devices=devices,
    num_nodes=1,
    node_rank=0,
    main_address="127.0.0.1",
    main_port=int(port),
    precision=None,
    script=script,
)
main(options, script_args)
