"""DataFrames of results (pandas is imported only when a frame is asked for), and the scenario
fields of the results whose rows are runs."""
from __future__ import annotations

from dataclasses import dataclass

from autotune.specs.variants import DIMENSIONS, configuration

__all__ = ["DIMENSION_KEYS", "configuration"]   # configuration: a result's rows group by dimension

DIMENSION_KEYS = tuple(DIMENSIONS)     # one column per dimension in every result's rows, in position order


def frame(rows: list, columns: list[str] | tuple[str, ...]):
    """A DataFrame of rows (dicts or tuples in column order)."""
    import pandas as pd

    if rows and isinstance(rows[0], dict):
        return pd.DataFrame.from_records([{k: r.get(k) for k in columns} for r in rows], columns=list(columns))
    return pd.DataFrame.from_records(list(rows), columns=list(columns))


SCENARIO_COLUMNS = ("ivp", "machine", "n", "nodes", "threads")   # where a run ran, on each row of its frame


def scenario_head(result) -> dict:
    """A result's scenario as the first columns of each of its rows."""
    return {k: getattr(result, k) for k in SCENARIO_COLUMNS}


@dataclass
class RunScenario:
    """Where a result's runs ran: the first fields of tune's and the online results."""
    ivp: str
    method: str
    machine: str
    n: int
    nodes: int
    threads: int
