"""Importing the object a declaration names as ``"package.module:attribute.path"``.

Manifests name code as strings so that reading them imports nothing; the
code is imported when first needed.  Importing a plugin's module runs its
code, which may raise anything or even call ``sys.exit``: callers catch
both and turn them into an error naming the plugin.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["import_attribute"]


def import_attribute(path: str) -> Any:
    """The object at ``"module:attr.sub"``: the module imported, then each attribute taken."""
    module_name, _, attr_path = path.partition(":")
    obj: Any = importlib.import_module(module_name)
    for attr in attr_path.split("."):
        obj = getattr(obj, attr)
    return obj
