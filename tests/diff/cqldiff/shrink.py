"""Shrinking a differing case to a small reproduction.

A case is (table model, history) where the history's last statement is the one whose answers
differ. Shrinking keeps that last statement and tries, in order: dropping earlier statements
(delta debugging), dropping non-key columns from the schema together with the statements that
name them, and replacing values by simpler ones. A change is kept when a fresh replay still
differs at the last statement and nowhere before it.

Invariant: every accepted step was verified by a replay against both servers; shrinking stops
at its budget (replays and seconds) with the smallest case verified so far.
"""

import copy
import time

from .types import simpler


class Budget:
    def __init__(self, seconds, replays):
        self.deadline = time.monotonic() + seconds
        self.replays = replays

    def spend(self):
        self.replays -= 1
        return self.replays >= 0 and time.monotonic() < self.deadline


def shrink(replayer, table, history, budget, signature):
    """Returns (table, history) no larger than the input, still differing at the end in
    the same way (signature: case.difference_signature of the difference)."""
    last = history[-1]
    prefix = list(history[:-1])

    def test(tbl, pre):
        if not budget.spend():
            return False
        return replayer.last_differs(tbl.create_stmt(), pre + [last], signature)

    prefix = _ddmin(prefix, lambda p: test(table, p))
    # Columns: drop one with every statement that names it.
    for col in list(table.values):
        if col.name in last.cols:
            continue
        smaller = copy.deepcopy(table)
        smaller.columns = [c for c in smaller.columns if c.name != col.name]
        pre = [s for s in prefix if col.name not in s.cols]
        if test(smaller, pre):
            table, prefix = smaller, pre
    # Values: simpler ones, one at a time.
    stmts = prefix + [last]
    for i in range(len(stmts)):
        n_args = len(stmts[i].args())
        for k in range(n_args):
            arg = stmts[i].args()[k]
            if arg.unset:
                continue
            for candidate in simpler(arg.type, arg.value)[:3]:
                trial = stmts[:i] + [stmts[i].replace_arg(k, candidate)] + stmts[i + 1:]
                if not budget.spend():
                    return table, stmts
                if replayer.last_differs(table.create_stmt(), trial, signature):
                    stmts = trial
                    break
    return table, stmts


def _ddmin(items, differs):
    """Delta debugging: a small sublist of items for which differs() holds (differs(items)
    is assumed)."""
    if differs([]):
        return []
    n = 2
    while len(items) >= 2:
        size = max(1, len(items) // n)
        chunks = [items[i:i + size] for i in range(0, len(items), size)]
        reduced = False
        for i in range(len(chunks)):
            complement = [x for j, c in enumerate(chunks) if j != i for x in c]
            if differs(complement):
                items = complement
                n = max(n - 1, 2)
                reduced = True
                break
        if not reduced:
            if n >= len(items):
                break
            n = min(len(items), n * 2)
    return items
