"""Rendering calibration results: the fitted communication model, a host's machine file."""
from __future__ import annotations

from autotune.report.registry import renderer
from autotune.report.text import json_text
from autotune.results.calibrate import CalibrateResult, HostMachineResult, caveat


@renderer(CalibrateResult, "json")
def calibration_json(res: CalibrateResult) -> str:
    return json_text(res)


@renderer(HostMachineResult, "json")
def host_json(res: HostMachineResult) -> str:
    return json_text(res)


@renderer(HostMachineResult, "table")
def host_table(res: HostMachineResult) -> str:
    u = res.uarch
    what = (f"{u.get('cpu', '')}: " if u.get("cpu") else "") + f"{u.get('name')} ({u.get('uarch')})"
    lines = [f"microarchitecture: {what}" + (", assumed (--uarch)" if u.get("assumed") else ""),
             f"in-core model: OSACA {u.get('osaca')}; ISA flags: {' '.join(res.flags)}"]
    if res.dry_run:
        lines += [f"dry run: nothing measured, nothing written; calibrate --node would write "
                  f"machine '{res.machine}' ({res.nodes} node(s) x {res.cores} cores) to {res.file}:",
                  f"clock: {res.clock_ghz:.2f} GHz, the OS's figure, not measured under load", "",
                  res.text or ""]
        return "\n".join(lines)
    source = f" from {res.imported_from}" if res.imported_from else f" in {res.wall_s:.1f} s"
    lines.append(f"wrote machine '{res.machine}' to {res.file}{source} ({res.nodes} node(s) x {res.cores} "
                 f"cores, {res.clock_ghz:.2f} GHz; network assumed until calibrate --procs"
                 + ("" if res.barrier else ", barrier too") + ")")
    if res.clock_measured:
        lines.append(f"  clock {res.clock_ghz:.2f} GHz measured under load on all cores (one core alone "
                     f"{res.clock_1core_ghz:.2f} GHz; the OS says {res.os_clock_ghz:.2f} GHz)")
    if res.barrier:
        per = ", ".join(f"{1e6 * v:.2f} us on {t}" for t, v in res.barrier["seconds"].items())
        lines.append(f"  barrier events (a parallel region's end and the next one's start) {per} thread(s): "
                     f"{1e9 * res.barrier['per_doubling_s']:.0f} ns per doubling of the threads")
    if res.last_level:
        ll = res.last_level
        lines.append(f"  {ll['level']} capacity {ll['capacity_bytes'] / 2**20:.0f} MiB per instance "
                     f"(the OS says {ll['nominal_bytes'] / 2**20:.0f} MiB; {ll['found']})")
    for level, row in res.bandwidth_gbs.items():
        lines.append(f"  {level:4} " + "  ".join(f"{k} {v:7.1f}" for k, v in row.items()) + "  GB/s (all cores)")
    lines += wide_lines(res.wide_spreads)
    if res.reference_kernels:
        lines += reference_table(res.reference_kernels)
    return "\n".join(lines) + "\n"


def wide_lines(wide: list[dict], shown: int = 8) -> list[str]:
    """A line per bandwidth whose runs spread wide, or one line for them all where there are many."""
    if not wide:
        return []
    from autotune.specs.hostmachine import WIDE_SPREAD
    if len(wide) > shown:
        w = max(wide, key=lambda w: w["spread"])
        return [f"  warning: {len(wide)} bandwidths' runs spread over {100 * WIDE_SPREAD:.0f} % ((max - min) / "
                f"median), the widest {w['level']} {w['kernel']} on {w['threads']} thread(s) "
                f"{100 * w['spread']:.1f} %; the file keeps the upper quartiles (the JSON lists them all)"]
    return [f"  warning: {w['level']} {w['kernel']} on {w['threads']} thread(s): runs spread "
            f"{100 * w['spread']:.1f} % (over {100 * WIDE_SPREAD:.0f} %), the file keeps the upper "
            f"quartile {w['gbps']:.2f} GB/s" for w in wide]


def _num(x, fmt: str) -> str:
    """x in fmt, or "-" in its width where x is None."""
    return format("-", ">" + fmt.split(".")[0]) if x is None else format(x, fmt)


def _rate(level: str, r: dict) -> str:
    if not r["fitted"]:
        return f"{level} {r['rate']:.2f} B/cy (the design's: {r.get('why', 'kept')})"
    return f"{level} {r['rate']:.2f} B/cy (design {r['design']:.2f}{', at the bound' if r.get('at_bound') else ''})"


def reference_table(ref: dict) -> list[str]:
    """The reference kernels (model.refkernels.summary) under the model fitted (rule, rates,
    in-core time), their ratio as the file was designed, and every rule's error."""
    chosen = ref["rule"] + (" (as written)" if ref["rule"] == ref["as_written"] else
                            f" (written {ref['as_written']}, changed)")
    lines = ["", f"reference kernels on one core (main memory on every core: x N, cycles per cache line of the "
                 f"node), cy/CL at {ref['clock_ghz']:.2f} GHz; transfers {chosen}:",
             f"  {'kernel':8} {'level':5} {'measured':>9} {'predicted':>10} {'ratio':>6} {'designed':>9}"]
    for r in ref["rows"]:
        level = r["level"] if r.get("cores", 1) == 1 else f"{r['level']} x{r['cores']}"
        lines.append(f"  {r['kernel']:8} {level:5} {_num(r['measured_cy_cl'], '9.2f')} "
                     f"{_num(r['predicted_cy_cl'], '10.2f')} {_num(r['ratio'], '6.2f')} "
                     f"{_num(r.get('designed_ratio'), '9.2f')}"
                     + (f"  ({r['error']})" if r.get("error") else ""))
    if ref.get("rates"):
        lines.append("  cache transfer rates: " + ", ".join(_rate(lv, r) for lv, r in ref["rates"].items()))
    incore = ref.get("incore") or {}
    if incore:
        measured = [k for k, i in incore.items() if i["source"] == "measured"]
        port = [k for k, i in incore.items() if i["source"] != "measured"]
        lines.append("  in-core time: " + "; ".join(
            ([f"measured for {', '.join(measured)}"] if measured else [])
            + ([f"the port model's for {', '.join(port)}"] if port else []))
            + (f" ({ref['incore_rule']})" if ref.get("incore_rule") else ""))
    rule_rates = ref.get("rule_rates") or {}

    def notes(name: str) -> str:
        said = [", ".join(f"{lv} {r:.2f}" for lv, r in rule_rates[name].items()) + " B/cy"] \
            if rule_rates.get(name) else []
        said += ["chosen"] if name == ref["rule"] else []
        return f" ({'; '.join(said)})" if said else ""
    errors = "; ".join(f"{name} {_num(e, '.3f')}{notes(name)}" for name, e in ref["errors"].items())
    lines.append(f"  mean |log(predicted/measured)| over {ref['compared']} kernel-levels: as designed "
                 f"{_num(ref['error_as_designed'], '.3f')}, with the in-core time "
                 f"{_num(ref['error_incore_measured'], '.3f')}, fitted {_num(ref['error_fitted'], '.3f')}")
    lines.append(f"  each rule with its rates fitted: {errors} (checked in {ref['wall_s']:.1f} s)")
    return lines


@renderer(CalibrateResult, "table")
def calibration_table(result: CalibrateResult) -> str:
    res = result.to_dict()
    lines = [f"calibrated {res['machine']} in {res['wall_s']:.1f} s ({res['runs']} benchmark runs; "
             f"written to {res['machine_file']})", ""]
    where = res.get("measured_on")
    if where:
        lines[-1:-1] = [f"ranks ran on: {', '.join(where['nodes'])}" + (f" ({caveat(where)})" if caveat(where) else "")]
    for op, r in res["operations"].items():
        lines.append(f"{op}: measured p = {', '.join(map(str, r['measured_p']))}")
        groups = [("all p (joint, for unmeasured p)", r["fit"]["segments"])]
        groups += [(f"p = {q}", segs) for q, segs in r["fit"].get("per_p", {}).items()]
        for label, segs in groups:
            lines.append(f"  {label}:")
            for s in segs:
                upto = "end" if s["max_bytes"] is None else f"{s['max_bytes']:.0f} B"
                bw = f"{1e-9 / s['per_byte_s']:.2f} GB/s" if s["per_byte_s"] > 0 else "inf"
                lines.append(f"    up to {upto:>12}: latency {s['latency_s'] * 1e6:8.3f} us, bandwidth {bw}")
        for label, key in (("held-out sizes", "heldout_error_pct"), ("held-out p", "heldout_p_error_pct")):
            e = r[key]
            lines.append(f"  {label}: " + ("n/a" if not e else
                         f"median {e['median']:.1f} %, max {e['max']:.1f} % over {e['points']} points"
                         + (f" (p = {e['p']})" if "p" in e else "")))
    if "barrier" in res:
        b = res["barrier"]
        lines.append(f"barrier: {b['per_doubling_s'] * 1e9:.1f} ns per doubling of the thread count")
    return "\n".join(lines)

