# A Relay pass written for TVM: `relaypass port` rewrites its imports.
import tvm
from tvm import relay


@tvm.transform.module_pass(opt_level=1)
def identity(mod, ctx):
    return mod


x = relay.var("x", shape=(2,))
print(identity(tvm.IRModule.from_expr(relay.nn.relu(x))))
