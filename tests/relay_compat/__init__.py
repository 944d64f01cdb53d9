"""Ports of TVM v0.18's Relay tests, one module per TVM file (names may match tests/' own)."""
