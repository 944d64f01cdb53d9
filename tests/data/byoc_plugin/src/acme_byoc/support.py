"""Which calls the acme accelerator takes one by one (the manifest's ``[[target]]`` entry).

Imported only when AnnotateTarget first asks for target ``acme``.
"""


def nchw_pooling(call):
    """acme pools NCHW data only; the call is typed, its attributes are Relay's."""
    return call.attrs.layout == "NCHW"
