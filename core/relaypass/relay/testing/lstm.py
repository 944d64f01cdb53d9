"""``relay.testing.lstm``: the unrolled LSTM, as Relay's builder makes it."""

from ...testing.workloads.lstm import (
    get_net,
    get_workload,
    lstm_cell,
)

__all__ = ["get_net", "get_workload", "lstm_cell"]
