"""A pass to try without packaging it: relaypass run --load examples/my_passes.py ...

`relaypass run --load FILE.py` runs this file and registers the passes it
defines at its top level (docs/cli.md, "Prototyping passes: --load").
"""

from relaypass import relay
from relaypass.functor import MixedModeMutator
from relaypass.transform import function_pass


class _ReluAsMaximum(MixedModeMutator):
    def rewrite_call(self, pre, post):
        if post.op == relay.Op.get("nn.relu"):
            return relay.maximum(post.args[0], relay.const(0.0))
        return post


@function_pass(opt_level=1, name="ReluToMaximum")
def relu_to_maximum(func, mod, ctx):
    """Write nn.relu(x) as maximum(x, 0f)."""
    return _ReluAsMaximum().visit(func)
