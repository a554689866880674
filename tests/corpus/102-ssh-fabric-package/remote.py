class RemoteJob:
    def __init__(self, conn, strategy):
        self.conn = conn
        self.args = [f"--strategy={strategy}"]

    def setup_optimizers(self, names):
        self.args += [f"--optimizer={n}" for n in names]

    def submit(self):
        self.conn.run("python train.py " + " ".join(self.args))
