"""The acme accelerator's relaypass plugin: its pattern table (:mod:`acme_byoc.patterns`) and operator support (:mod:`acme_byoc.support`)."""
