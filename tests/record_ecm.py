"""Record the ECM results of stores into the replay fixture that tests use instead of cold runs.

    python -m tests.record_ecm [--merge] STORE.sqlite [STORE.sqlite ...]

--merge keeps the records already there (a store's record of the same analysis replaces it).

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


def main(argv: list[str]) -> int:
    records: dict[str, dict] = {}
    if argv[:1] == ["--merge"]:
        argv = argv[1:]
        for rec in json.loads(TARGET.read_text()):
            inp = rec["inputs"]
            records[json.dumps([inp["code"], inp["constants"], inp["regime"], inp["machine"]], sort_keys=True)] = rec
    for path in argv:
        db = sqlite3.connect(path)
        for part, regime, machine, result, inputs in db.execute(
                "SELECT part, regime, machine, result, inputs FROM ecm WHERE ok = 1 ORDER BY part, regime"):
            inp = json.loads(inputs)
            key = json.dumps([inp["code"], inp["constants"], inp["regime"], inp["machine"]], sort_keys=True)
            records[key] = {"part": part, "regime": regime, "machine": machine, "inputs": inp,
                            "result": json.loads(result)}
        db.close()
    TARGET.parent.mkdir(exist_ok=True)
    TARGET.write_text(json.dumps(sorted(records.values(), key=lambda r: (r["part"], r["regime"], r["machine"])),
                                 indent=1, sort_keys=True) + "\n")
    print(f"recorded {len(records)} analyses to {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
