"""``relay.prelude``: Relay's standard library of list, option and tree functions (``Prelude``)."""

from ..frontend.prelude import Prelude

__all__ = ["Prelude"]
