"""OpCounter: how many operator calls the module has before and after each pass.

::

    with PassContext(opt_level=1, instruments=[get_instrument("OpCounter")]):
        mod = Sequential([get_pass("RemoveIdentities")])(mod)

prints, when the context exits::

    operator calls: 3 passes
      sequential        3 -> 1  (add -1, multiply -1)
      InferType         3 -> 3
      RemoveIdentities  3 -> 1  (add -1, multiply -1)

and keeps the same in ``records`` for code.  Functions are immutable and
shared between the modules before and after a pass, so each function is
counted once, however many passes leave it unchanged.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from relaypass.functor import post_order_visit
from relaypass.ir.expr import Call, Function
from relaypass.ir.op import Op
from relaypass.transform.instrument import PassInstrument


@dataclass
class PassRecord:
    """One pass as OpCounter saw it: the operator calls of the module it got and returned."""

    name: str
    before: Counter[str]
    after: Counter[str] = field(default_factory=Counter)

    def changes(self) -> dict[str, int]:
        """Per operator, how many calls the pass added (positive) or removed (negative)."""
        return {op: self.after[op] - self.before[op]
                for op in sorted(set(self.before) | set(self.after))
                if self.after[op] != self.before[op]}


class OpCounter(PassInstrument):
    """Count the operator calls before and after each pass; print the counts on exit."""

    def __init__(self, *, label: str) -> None:  # the default is the manifest's
        self.label = label
        self.records: list[PassRecord] = []
        self._running: list[PassRecord] = []  # started, not finished: a Sequential's members nest
        self._counted: dict[int, tuple[Function, Counter[str]]] = {}

    def enter_pass_ctx(self) -> None:
        self.records.clear()

    def run_before_pass(self, mod: Any, info: Any) -> None:
        record = PassRecord(info.name, self._count(mod))
        self.records.append(record)  # in the order the passes start
        self._running.append(record)

    def run_after_pass(self, mod: Any, info: Any) -> None:
        self._running.pop().after = self._count(mod)

    def exit_pass_ctx(self) -> None:
        print(self.report())
        self._running.clear()
        self._counted.clear()

    def report(self) -> str:
        lines = [f"{self.label}: {len(self.records)} passes"]
        width = max((len(r.name) for r in self.records), default=0)
        for r in self.records:
            line = f"  {r.name:<{width}}  {sum(r.before.values())} -> {sum(r.after.values())}"
            changes = r.changes()
            if changes:
                line += "  (" + ", ".join(f"{op} {n:+d}" for op, n in changes.items()) + ")"
            lines.append(line)
        return "\n".join(lines)

    def _count(self, mod: Any) -> Counter[str]:
        total: Counter[str] = Counter()
        for func in mod.functions.values():
            if isinstance(func, Function):
                total.update(self._count_function(func))
        return total

    def _count_function(self, func: Function) -> Counter[str]:
        cached = self._counted.get(id(func))
        if cached is not None and cached[0] is func:
            return cached[1]
        counts: Counter[str] = Counter()

        def visit(node: Any) -> None:
            if isinstance(node, Call) and isinstance(node.op, Op):
                counts[node.op.name] += 1

        post_order_visit(func, visit)
        self._counted[id(func)] = (func, counts)  # holding func keeps its id from being reused
        return counts
