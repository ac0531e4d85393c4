"""Results of ranking one scenario (rank) and of one variant's breakdown (explain)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Protocol

from autotune.model.bound import Bound
from autotune.model.preselect import Rule
from autotune.results import workparts
from autotune.results.frames import DIMENSION_KEYS, frame
from autotune.results.registry import result_type
from autotune.results.variant import VariantResult
from autotune.specs.exclusion import Exclusions
from autotune.specs.scenario import Scenario
from autotune.specs.variants import Variant

# one row per variant: the CSV columns and those of to_frame()
COLUMNS = ["ivp", "method", "machine", "n", "nodes", "threads", "rank", "name", *DIMENSION_KEYS,
           "predicted_s", "node_s", "comm_s", "barrier_s", "preselected", "failed_kernels", "bound_s",
           "bound_ratio", "bound_wa_s"]
KERNEL_COLUMNS = ["name", "kernel", "regime", "alpha", "sigma", "beta", "executions", "cores_used", "seconds"]


class Columns(NamedTuple):
    """A ranked scenario's rows as columns, best first, where every row has a prediction: the
    variants, their total, node, comm and barrier seconds, and how many of the first are
    pre-selected (what a sweep's CSV is written from, a column at a time)."""
    variants: list[Variant]
    total: list[float]
    node: list[float]
    comm: list[float]
    barrier: list[float]
    chosen: int


class RowSource(Protocol):
    """What builds a ranked scenario's rows when they are first read (a sweep reads a few rows
    of each scenario): pipeline.scenariorows.ScenarioRows."""

    def ordered(self) -> list[VariantResult]: ...
    def preselected(self) -> set[str]: ...
    def predicted_any(self) -> bool: ...
    def brief(self, selected_only: bool) -> list[tuple]: ...
    def columns(self, selected_only: bool) -> Columns | None: ...
    def work(self, name: str) -> list[tuple]: ...
    def rows_of(self, name: str) -> "RowSource": ...


@result_type
class RankResult:
    """One scenario ranked: its variants best first (failed predictions last), the pre-selected
    ones, and what kept the others out.  `ordered` and `preselected` are given, or built by a
    RowSource when first read."""

    def __init__(self, scenario: Scenario, rule: Rule, ordered: list[VariantResult] | None = None,
                 preselected: set[str] | None = None, excluded: Exclusions | None = None,
                 analyses_run: int = 0, failures: dict[str, dict] | None = None, bound: Bound | None = None,
                 source: RowSource | None = None, incore: dict[str, dict] | None = None):
        self.scenario, self.rule = scenario, rule
        # part name -> the in-core time it is priced with (model.incore: source, why, both figures)
        self.incore = incore if incore is not None else {}
        self._ordered, self._preselected, self._source = ordered, preselected, source
        # the schemes that cannot run here and the values that do not pay, each with why
        self.excluded = excluded if excluded is not None else Exclusions()
        self.analyses_run = analyses_run
        self.failures = failures if failures is not None else {}     # part name -> error info
        self.bound = bound     # the step's floor on this node (None: an RHS part failed)

    @property
    def ordered(self) -> list[VariantResult]:
        """Best first; failed predictions last."""
        if self._ordered is None:
            self._ordered = self._source.ordered() if self._source is not None else []
        return self._ordered

    @ordered.setter
    def ordered(self, value: list[VariantResult]) -> None:
        self._ordered = value

    @property
    def preselected(self) -> set[str]:
        if self._preselected is None:
            self._preselected = self._source.preselected() if self._source is not None else set()
        return self._preselected

    @preselected.setter
    def preselected(self, value: set[str]) -> None:
        self._preselected = value

    def brief(self, selected_only: bool = False) -> list[tuple]:
        """Per variant, best first (selected_only: the pre-selected ones): (rank, variant, predicted,
        node, comm and barrier seconds (None: failed), pre-selected, failed parts), without the
        per-kernel breakdown (what a sweep's rows need)."""
        if self._source is not None and self._ordered is None and self._preselected is None:
            return self._source.brief(selected_only)
        pre, out = self.preselected, []
        for i, r in enumerate(self.ordered, 1):
            if selected_only and r.variant.name not in pre:
                continue
            p = r.prediction
            out.append((i, r.variant) + ((p.total_s, p.node_s, p.comm_s, p.barrier_s) if p else (None,) * 4)
                       + (r.variant.name in pre, r.failed_parts))
        return out

    def columns(self, selected_only: bool = False) -> Columns | None:
        """brief() as columns (Columns), or None where a row has no prediction."""
        if self._source is not None and self._ordered is None and self._preselected is None:
            return self._source.columns(selected_only)
        rows = self.brief(selected_only)
        pre = [r[6] for r in rows]
        chosen = sum(pre)
        if any(r[2] is None or r[7] for r in rows) or pre != [True] * chosen + [False] * (len(rows) - chosen) \
                or [r[0] for r in rows] != list(range(1, len(rows) + 1)):
            return None      # a failed row, pre-selected rows that are not the first, ranks not 1, 2, ...
        return Columns([r[1] for r in rows], *([r[k] for r in rows] for k in range(2, 6)), chosen)

    @property
    def predicted_any(self) -> bool:
        """Whether some variant has a prediction (none: every one needs a kernel part that failed)."""
        if self._source is not None and self._ordered is None:
            return self._source.predicted_any()
        return any(r.prediction is not None for r in self.ordered)

    @property
    def bound_s(self) -> float | None:
        return self.bound.total_s if self.bound else None

    @property
    def bound_wa_s(self) -> float | None:
        """The floor of code that writes through the caches (write-allocate; model.bound)."""
        return self.bound.wa_total_s if self.bound else None

    @property
    def bound_sweep_s(self) -> float | None:
        """The floor of a step whose iterations each sweep the node's block (model.bound)."""
        return self.bound.sweep.total_s if self.bound and self.bound.sweep else None

    @property
    def bound_sweep_wa_s(self) -> float | None:
        return self.bound.sweep.wa_total_s if self.bound and self.bound.sweep else None

    @property
    def best(self) -> VariantResult | None:
        """The variant with the shortest predicted time (None if none could be predicted)."""
        return self.ordered[0] if self.ordered and self.ordered[0].prediction else None

    def variant(self, name: str) -> VariantResult:
        for r in self.ordered:
            if r.variant.name == name:
                return r
        raise KeyError(name)

    def rank_of(self, name: str) -> int:
        return next(i for i, r in enumerate(self.ordered, 1) if r.variant.name == name)

    def work(self, name: str) -> list[tuple]:
        """A variant's kernel work as (part, regime code, ECM result, lines): what the learned model's
        fit prices again (pipeline.scenariorows.ScenarioRows.work); [] for a result made without it."""
        return self._source.work(name) if self._source is not None else []

    @property
    def model(self) -> str:
        """What the predictions rest on: "ecm", or "ecm+learned (N runs)" (calibrate --from-runs)."""
        return self.scenario.machine.model_label

    def notes(self) -> list[str]:
        sc, out = self.scenario, []
        learned = sc.machine.learned
        if learned:
            out.append(f"model {learned.label()}: ECM terms scaled by factors fitted on {learned.date or '?'} to "
                       f"{learned.runs} measured runs in {learned.scenarios} scenarios (--model ecm: without them)")
        net = sc.machine.network
        if net.get("model") == "datasheet":
            out.append(f"communication model from the data sheet, not calibrated ({net['provenance']})")
        else:
            out.append(f"communication model fitted on {net.get('calibrated', '?')} ({net['provenance']})")
        if sc.ranks_per_node > 1:
            out.append(f"machine {sc.machine.name} has one node: its {sc.nodes} ranks share it "
                       f"({sc.node_threads} cores busy)")
        elif sc.beyond_machine:
            out.append(f"{sc.nodes} nodes exceed the {sc.machine.nodes} of machine {sc.machine.name}: extrapolated")
        if sc.control is not None:
            out.append(sc.control.describe())
        for e in self.excluded:     # a scheme (comm=allgather), or a value such as store=nt
            out.append(f"{e.item} excluded: {e.why}")
        for part, info in self.failures.items():
            out.append(f"kernel {part} ({info.get('regime')}) failed in kerncraft: {info.get('error')} "
                       f"(log: {info.get('log')})")
        if self.incore:
            out.append(self._incore_note())
        return out

    def _incore_note(self) -> str:
        counts = self.incore_counts()
        measured = counts.get("measured", 0)
        unmeasured = sum(1 for e in self.incore.values() if e.get("measured_cy_per_cl") is None)
        text = (f"in-core times: the measurement on this CPU for {measured} of {len(self.incore)} kernel parts, "
                f"the port model for the rest")
        if unmeasured:
            text += f" ({unmeasured} not measured: {next(e['why'] for e in self.incore.values() if e.get('measured_cy_per_cl') is None)})"
        return text

    def incore_counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for e in self.incore.values():
            out[e["source"]] = out.get(e["source"], 0) + 1
        return out

    def to_dict(self) -> dict:
        sc = self.scenario
        m = sc.machine
        return {
            "ivp": sc.ivp.name, "method": sc.method.name, "machine": m.name,
            "n": sc.n, "nodes": sc.nodes, "threads": sc.threads, **self._model_field(),
            **({"control": sc.control.to_dict()} if sc.control else {}),
            "selection": {"rule": self.rule.kind, "value": self.rule.value, "description": self.rule.describe()},
            "comm_model": dict(m.network), "barrier_model": dict(m.barrier),
            "notes": self.notes(),
            "ecm": dict({"analyses_run": self.analyses_run, "failures": self.failures},
                        **({"incore": self.incore_counts()} if self.incore else {})),
            "excluded_comm": {e.item.partition("=")[2]: e.why for e in self.excluded.schemes()},   # (and its way)
            "excluded_values": {e.item: e.why for e in self.excluded.values()},
            "bound_s": self.bound_s,
            "bound_wa_s": self.bound_wa_s,
            "bound_sweep_s": self.bound_sweep_s,
            "bound_sweep_wa_s": self.bound_sweep_wa_s,
            "bound": self.bound.to_dict() if self.bound else None,
            "variants": [r.to_dict(i + 1, r.variant.name in self.preselected, self.bound_s)
                         for i, r in enumerate(self.ordered)],
        }

    def _model_field(self) -> dict:
        """{"model": ...} where learned factors are in use (the output without them is as it was)."""
        return {"model": self.model} if self.scenario.machine.learned else {}

    def rows(self) -> list[dict]:
        """One flat row per variant (COLUMNS)."""
        sc = self.scenario
        head = {"ivp": sc.ivp.name, "method": sc.method.name, "machine": sc.machine.name, "n": sc.n,
                "nodes": sc.nodes, "threads": sc.threads}
        out = []
        for i, r in enumerate(self.ordered, 1):
            d = r.to_dict(i, r.variant.name in self.preselected, self.bound_s)
            row = dict(head)
            row.update(d["configuration"])
            row.update({k: d[k] for k in COLUMNS[6:] if k in d and k not in ("failed_kernels", "bound_s", "bound_wa_s")})
            row["failed_kernels"] = ";".join(d["failed_kernels"])
            row["bound_s"], row["bound_wa_s"] = self.bound_s, self.bound_wa_s
            out.append(row)
        return out

    def to_frame(self):
        """One row per variant, best first."""
        return frame(self.rows(), COLUMNS)

    def explain(self, name: str) -> "ExplainResult":
        self.variant(name)
        return ExplainResult(self, name)


@result_type
@dataclass
class ExplainResult:
    """One variant's prediction, kernel part by kernel part, in its ranked scenario."""
    ranking: RankResult
    name: str
    ecm: RankResult | None = None     # where learned factors are in use: the same scenario without them
    window: dict | None = None        # a pipelined step's window (pipeline.applicable.window_of)
    control: dict | None = None       # step-size control's terms (pipeline.applicable.control_terms)

    def kernel_rows(self) -> list[dict]:
        """Per kernel part; with learned factors also its seconds by the ECM model alone (ecm_s)."""
        rows = self.result.kernel_rows()
        if self.ecm is not None:
            for row, base in zip(rows, self.ecm.variant(self.name).kernel_rows()):
                row["ecm_s"] = base["seconds"]
        return rows

    @property
    def result(self) -> VariantResult:
        return self.ranking.variant(self.name)

    @property
    def predicted_s(self) -> float | None:
        return self.result.predicted_s

    def to_dict(self) -> dict:
        res, sc = self.ranking, self.ranking.scenario
        d = self.result.to_dict(res.rank_of(self.name), self.name in res.preselected, res.bound_s)
        d.update(ivp=sc.ivp.name, machine=sc.machine.name, n=sc.n, nodes=sc.nodes, threads=sc.threads,
                 notes=res.notes(), bound_s=res.bound_s, bound_wa_s=res.bound_wa_s, bound=res.bound.to_dict() if res.bound else None)
        if self.control:
            d.update(control=self.control)
        if self.ecm is not None:
            d.update(model=res.model, kernels=self.kernel_rows(), ecm_predicted_s=self.ecm.variant(self.name).predicted_s)
        if res.incore:
            d["incore"] = self.incore()
        sweeps = self.sweeps()
        if sweeps:
            d["sweeps"] = sweeps
        loops = self.loops()
        if loops:
            d["loops"] = loops
        traffic = self.traffic()
        if traffic:
            d["traffic_bytes"] = traffic
        if self.window:
            d["window"] = self.window
        return d

    def incore(self) -> dict[str, dict]:
        """The variant's kernel parts -> the in-core time each is priced with (empty where the
        machine file measures none)."""
        loops = self.loops()      # a fused sweep runs its loops, not the part kerncraft analyses as one
        names = [row["name"] for row in self.result.kernel_rows() if row["name"] not in loops]
        names += [lp["part"] for infos in loops.values() for i in infos for lp in i["loops"]]
        return {n: self.ranking.incore[n] for n in dict.fromkeys(names) if n in self.ranking.incore}

    def _rows(self):
        """The row source that priced this variant (None: a result read back from JSON)."""
        src = self.ranking._source
        return src.rows_of(self.name) if src is not None else None

    def loops(self) -> dict[str, list[dict]]:
        """The variant's fused sweep parts -> the loops each runs over a tile (results.workparts)."""
        return workparts.loops(self._rows(), self.name)

    def sweeps(self) -> dict[str, list[dict]]:
        """The variant's fused sweep parts -> how each is priced against its measured sweep
        (results.workparts)."""
        return workparts.sweeps(self._rows(), self.name)

    def traffic(self) -> dict[str, dict[str, float]]:
        """The variant's kernel parts -> the bytes a step moves across each interface below L1
        (results.workparts)."""
        return workparts.traffic(self._rows(), self.name, self.ranking.scenario.machine.cacheline)

    def to_frame(self):
        """One row per kernel part."""
        return frame(self.kernel_rows(), KERNEL_COLUMNS + (["ecm_s"] if self.ecm is not None else []))
