"""Plugin machinery: entry-point discovery, manifests, dependency resolution, hook specs."""
