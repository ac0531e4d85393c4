"""Record the ECM results of stores into the replay fixture that tests use instead of cold runs.

    python -m tests.record_ecm [--merge] STORE.sqlite [STORE.sqlite ...]
    python -m tests.record_ecm --refresh

--merge keeps the records already there (a store's record of the same analysis replaces it).
--refresh brings every record up to the analysis set-up of this checkout: a record whose inputs
it would make otherwise (another cache predictor, a data view) is analysed again; the rest stay.
A record is named after the shipped machine whose node part it was analysed with.

Keeps each analysis's inputs (kernel code, constants, regime, machine digest) and result; the
replaying fixture (conftest.replay_store) re-keys them with the versions of the compiler,
kerncraft and OSACA installed then, so the recording outlives upgrades.  Kernel code or machine
files that change make their records stale: those parts are analysed for real again, and tests
that assert on reuse say so.
"""
from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

TARGET = Path(__file__).with_name("data") / "ecm_results.json"


def _machines() -> dict[str, object]:
    """Shipped machines by the digest of their node part (what a record's inputs name)."""
    from autotune.specs.machine import load_machine
    from autotune.specs.loading import shipped_names
    from autotune.specs.shipped import shipped_dir
    return {m.kerncraft_digest: m for m in map(load_machine, shipped_names(shipped_dir("machines")))}


def _parts() -> dict[str, object]:
    """Every kernel part of every shipped IVP and method's variant pool, by its code."""
    from autotune.pipeline.layout import Session
    from autotune.specs.ivp import ivp_names, load_ivp
    from autotune.specs.method import load_method, method_names
    from autotune.specs.variants import enumerate_variants, spaces, stored
    session, parts = Session(), {}
    for name in ivp_names():
        for way in spaces(load_ivp(name)):        # each way the IVP can be stored: its own kernel parts
            ivp = stored(load_ivp(name), way.fixed)
            for method in map(load_method, method_names()):
                for unit in session.layout(ivp, method, enumerate_variants((way,))).units:
                    parts.setdefault(unit.part.code, unit.part)
    return parts


def refresh(records: list[dict]) -> list[dict]:
    import tempfile

    from autotune.model.regime import Regime
    from autotune.pipeline.predict import _analysis_inputs, ensure_ecm
    from autotune.storage.store import Store
    machines, parts = _machines(), _parts()
    out, todo = [], {}
    for rec in records:
        machine, part = machines.get(rec["inputs"]["machine"]), parts.get(rec["inputs"]["code"])
        if machine is None or part is None:
            out.append(rec)
            continue
        data, _, layer = rec["regime"].partition("/lc:")
        regime = Regime(data, layer or None)
        inputs = _analysis_inputs(part, machine, regime)
        same = all(inputs.get(k) == rec["inputs"].get(k) for k in ("cache_predictor", "view", "constants", "backend"))
        if same:
            out.append(dict(rec, machine=machine.name))
        else:
            todo.setdefault(machine.name, (machine, []))[1].append((part, regime))
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "refresh.sqlite")
        for machine, needs in todo.values():
            print(f"{machine.name}: analysing {len(needs)} records again", file=sys.stderr)
            got, _ = ensure_ecm(needs, machine, store)
            for part, regime in needs:
                inputs = _analysis_inputs(part, machine, regime)
                out.append({"part": part.name, "regime": regime.label, "machine": machine.name, "inputs": inputs,
                            "result": got[(part.code, regime.data, regime.layer)]})
        store.close()
    return out


def main(argv: list[str]) -> int:
    records: dict[str, dict] = {}
    if argv[:1] == ["--refresh"]:
        fresh = refresh(json.loads(TARGET.read_text()))
        TARGET.write_text(json.dumps(sorted(fresh, key=lambda r: (r["part"], r["regime"], r["machine"])),
                                     indent=1, sort_keys=True) + "\n")
        print(f"recorded {len(fresh)} analyses to {TARGET}")
        return 0
    if argv[:1] == ["--merge"]:
        argv = argv[1:]
        for rec in json.loads(TARGET.read_text()):
            inp = rec["inputs"]
            records[json.dumps([inp["code"], inp["constants"], inp["regime"], inp["machine"]], sort_keys=True)] = rec
    shipped = {digest: m.name for digest, m in _machines().items()}
    for path in argv:
        db = sqlite3.connect(path)
        for part, regime, machine, result, inputs in db.execute(
                "SELECT part, regime, machine, result, inputs FROM ecm WHERE ok = 1 ORDER BY part, regime"):
            inp = json.loads(inputs)
            key = json.dumps([inp["code"], inp["constants"], inp["regime"], inp["machine"]], sort_keys=True)
            # named after the shipped machine of that node part (a copy of its file is that machine)
            records[key] = {"part": part, "regime": regime, "machine": shipped.get(inp["machine"], machine),
                            "inputs": inp,
                            "result": json.loads(result)}
        db.close()
    TARGET.parent.mkdir(exist_ok=True)
    TARGET.write_text(json.dumps(sorted(records.values(), key=lambda r: (r["part"], r["regime"], r["machine"])),
                                 indent=1, sort_keys=True) + "\n")
    print(f"recorded {len(records)} analyses to {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
