"""Jobs that are one library function: the rule names it instead of a script of its own.

A rule whose job reads its inputs, calls the library and writes its outputs can run the generic
script ``workflow/scripts/library_job.py`` with ``job="<module>:<function>"`` among its params.
The function is called with the job's named inputs, outputs and other params as keyword
arguments (so a function's parameters are the rule's names, and no name may be both an input and
an output or param), plus ``threads`` and any declared resource (``token_budget``) it takes by
name. It is imported only when its job runs, so each job's environment needs only the function's
module. A new study's jobs are functions of its own module this way, with no script files.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping

from plmfair.errors import PlmfairError
from plmfair.registry import load_function


class JobError(PlmfairError):
    """A rule names a library job that does not exist or cannot take the rule's arguments."""


def job_function(job: str) -> Callable:
    """The function ``"<module>:<function>"`` names."""
    try:
        return load_function(job)
    except LookupError:
        raise JobError(
            f"job {job!r} names no function: write it as '<module>:<function>', e.g. "
            f"'plmfair.cloze.annotations:ingest_cloze_test'"
        ) from None


def job_arguments(rule: str, named: Mapping[str, Mapping], extra: Mapping) -> dict:
    """The keyword arguments of a job: its named inputs, outputs and params (``named``, by section),
    and of ``extra`` (threads, resources) those the function takes, which the caller filters."""
    out: dict = {}
    for section, values in named.items():
        for key, value in values.items():
            if key in out:
                raise JobError(
                    f"rule {rule}: {key!r} is both {out[key][0]} and {section}; a library job gets "
                    f"them by name, so give them different names in the rule"
                )
            out[key] = (section, value)
    return {key: value for key, (_, value) in out.items()} | dict(extra)


def run(
    job: str, rule: str, *, inputs: Mapping, outputs: Mapping, params: Mapping, threads: int, resources: Mapping
) -> object:
    """Call the job's function with the rule's names (see the module's docstring)."""
    function = job_function(job)
    takes = inspect.signature(function).parameters
    extra = {"threads": threads} if "threads" in takes else {}
    extra |= {key: value for key, value in resources.items() if key in takes and key != "threads"}
    return function(**job_arguments(rule, {"input": inputs, "output": outputs, "params": params}, extra))
