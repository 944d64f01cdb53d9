"""The demo instrument: counts passes."""

from relaypass.transform.instrument import PassInstrument


class DemoCounter(PassInstrument):
    def __init__(self, label="passes run"):
        self.label = label
        self.count = 0

    def run_after_pass(self, mod, info):
        self.count += 1

    def exit_pass_ctx(self):
        print(f"{self.label}: {self.count}")
