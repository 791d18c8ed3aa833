"""The job registry (cross-cutting): `@job` and `@periodic` register a job function
where it is defined, in its area's `jobs.py`.

The queue takes the function itself (`queue.enqueue(run_bulk_operation, ...)`); RQ
carries its import path to the worker process, which finds the same function there.
The scheduler and the worker collect the periodic jobs from here, after
`socialpub.areas.import_jobs()` has imported every area's jobs.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

_jobs: dict[str, Callable] = {}
_periodic: dict[str, "Periodic"] = {}


@dataclass(frozen=True)
class Periodic:
    function: Callable
    # Seconds, or the name of the setting that holds them.
    every: float | str
    # Run in the scheduler's own thread rather than through the queue: for short
    # database claims that must keep running while the queue is down (what they
    # claimed comes back when its lease runs out).
    in_scheduler: bool = False

    @property
    def name(self) -> str:
        return path_of(self.function)

    def interval(self, settings) -> float:
        return float(getattr(settings, self.every) if isinstance(self.every, str) else self.every)


def path_of(function: Callable) -> str:
    return f"{function.__module__}.{function.__qualname__}"


def job(function: Callable) -> Callable:
    """Registers a function the queue may run."""
    _jobs[path_of(function)] = function
    return function


def periodic(*, every: float | str, in_scheduler: bool = False) -> Callable[[Callable], Callable]:
    """Registers a job the scheduler runs every `every` seconds (a number, or the name
    of the setting that holds it)."""

    def register(function: Callable) -> Callable:
        job(function)
        _periodic[path_of(function)] = Periodic(function, every, in_scheduler)
        return function

    return register


def load() -> None:
    """Imports every area's jobs, so the registry holds them all."""
    from socialpub.areas import import_jobs

    import_jobs()


def periodic_jobs() -> tuple[Periodic, ...]:
    load()
    return tuple(_periodic.values())


def resolve(function_path: str) -> Callable:
    """The registered job function at an import path."""
    if function_path not in _jobs:
        module_name = function_path.rpartition(".")[0]
        importlib.import_module(module_name)
    try:
        return _jobs[function_path]
    except KeyError:
        raise LookupError(f"{function_path} is not a registered job") from None
