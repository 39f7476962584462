"""The payload of a ``stepped`` fact: how a per-step call travels between files.

A file whose loop drives compiled code tells the file defining each imported
function it calls on every step (steps.py ``export``; entry_points.py for a
runner's entry point). ``ProjectFacts.stepped["helper"]`` is

    "<per>|<role>|<what>|<callee>[|<entry>][|@if <guard>], from <file>[, ...]"

- per: ``batch`` (a loop over a loader), ``epoch`` (full-batch) or ``step``;
- role: ``training`` / ``evaluation``, ``?`` when the receiving file decides
  (an entry point: does the function update parameters?);
- what: the compiled code the loop runs; callee: the call's source there;
- entry: a framework's per-step entry the call runs under (frameworks.py);
- ``@if <guard>``: the step-counter test every such call runs under
  (step_guards.py ``logging_guard``), always the last field;
- ``, from <file>``: appended by the engine on delivery (fact_joins.py); a
  fact passed on from a file that was itself told keeps the loop's file.

This module owns that encoding: ``encode`` writes a payload, ``decode`` reads
one, ``stepped_guard`` / ``unguarded`` read and drop the guard (step_guards.py
and the engine's join of two calls, fact_joins.py ``_joined``), and
``origin_file`` names the loop's file (hot_loops.py's reason).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

GUARD_FIELD = "@if "  # the last field of a ``stepped`` payload: "...|callee[|entry]|@if N % 500 == 0"
_FROM = ", from "


@dataclass(frozen=True)
class Stepped:
    """A decoded ``stepped`` payload (the guard is read by ``stepped_guard``)."""
    per: str
    role: str
    what: str
    callee: str
    entry: str  # "" when the call runs under no framework entry
    origin: str  # "<file>[, ...]"

    @property
    def origin_file(self) -> str:
        return self.origin.split(", ")[0]


def encode(drive: str, tail: str, guard: Optional[str]) -> str:
    """The payload of one per-step call: ``drive`` = "<per>|<role>|<what>",
    ``tail`` = "|<callee>[|<entry>][, from <file>]" (a fact passed on names the
    loop's file itself), ``guard`` the step-counter test around the call."""
    drive = drive.replace(_FROM, " from ")  # the engine appends ", from <file>"
    if guard is not None and "|" not in guard and _FROM not in guard:
        head, sep, origin = tail.partition(_FROM)
        tail = f"{head}|{GUARD_FIELD}{guard}{sep}{origin}"
    return drive + tail


def decode(why: str) -> Optional[Stepped]:
    """The fields of a delivered ``stepped`` payload; None when it is not one."""
    payload, _, origin = why.partition(_FROM)
    parts = payload.split("|")
    if parts[-1].startswith(GUARD_FIELD):  # the caller's step-counter guard (step_guards.py)
        parts.pop()
    if len(parts) in (4, 5) and parts[0] in ("batch", "epoch", "step") and origin:
        per, role, what, callee = parts[:4]
        return Stepped(per, role, what, callee, parts[4] if len(parts) == 5 else "", origin)
    return None


def origin_file(why: str) -> str:
    """The file whose loop makes the call (the first of the ``, from`` part)."""
    return why.partition(_FROM)[2].split(", ")[0]


def stepped_guard(why: str) -> Optional[str]:
    """The guard a ``stepped`` fact's payload carries, or None."""
    last = why.partition(_FROM)[0].rpartition("|")[2]
    return last[len(GUARD_FIELD):] if last.startswith(GUARD_FIELD) else None


def unguarded(why: str) -> str:
    """A ``stepped`` fact without its guard field."""
    head, sep, origin = why.partition(_FROM)
    rest, bar, last = head.rpartition("|")
    return f"{rest}{sep}{origin}" if bar and last.startswith(GUARD_FIELD) else why
