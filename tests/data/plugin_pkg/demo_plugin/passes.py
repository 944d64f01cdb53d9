"""The demo passes: DemoTag needs DemoAnnotate to have run first."""

from relaypass.transform import function_pass


def DemoAnnotate():  # noqa: N802 - pass factories are named like the pass
    @function_pass(opt_level=1, name="DemoAnnotate")
    def annotate(func, mod, ctx):
        return func.with_attr("demo.annotated", True)

    return annotate


def DemoTag():  # noqa: N802
    @function_pass(opt_level=2, name="DemoTag", required=["DemoAnnotate"])
    def tag(func, mod, ctx):
        if not func.attrs.get("demo.annotated"):
            raise RuntimeError("DemoTag ran before DemoAnnotate")
        return func.with_attr("demo.tag", ctx.config.get("demo.Tag.label"))

    return tag
