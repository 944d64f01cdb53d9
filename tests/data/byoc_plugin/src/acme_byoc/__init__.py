"""The acme accelerator's relaypass plugin: its pattern table lives in :mod:`acme_byoc.patterns`."""
