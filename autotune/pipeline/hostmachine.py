"""Cluster machine files for a new cluster: `calibrate --node` (this host, identified and
measured) and `calibrate --from-kerncraft` (a machine file as kerncraft distributes it).

Orchestration only: identification and flags come from tools/cpuprobe.py, the measurements from
tools/hostprobe.py, the file from specs/hostmachine.py.  Every file is written atomically and
loaded back like any other machine before the command reports success.
"""
from __future__ import annotations

import io
import os
import time
from pathlib import Path

from autotune.progress import Progress
from autotune.errors import InputError
from autotune.results.calibrate import HostMachineResult
from autotune.specs import capacity, hostmachine, runstats, stencils
from autotune.specs.cpus import load_table
from autotune.specs.isa import host_isa
from autotune.storage.atomic import write_text

CC = "gcc"


def _dump(data: dict) -> str:
    from autotune.storage.yamlfile import dump_text, round_trip_yaml

    yaml = round_trip_yaml()
    yaml.default_flow_style = False
    return dump_text(yaml, data)


def new_machine_target(given: str | None, out=None) -> tuple[str, Path]:
    """The new machine's name and file: a name goes to the user's machine folder (where --machine
    NAME finds it), a .yaml path is the file itself; out: another path."""
    from autotune.specs.shipped import user_machine_dir
    if not given:
        raise InputError(": expected the new machine's name", field="name")
    is_path = given.endswith((".yaml", ".yml"))
    name = Path(given).stem if is_path else given
    if not name or (not is_path and any(c in name for c in " /\\")):
        raise InputError(f"{given!r}: expected a name without spaces or slashes", field="name")
    target = Path(out) if out else Path(given) if is_path else user_machine_dir() / f"{name}.yaml"
    return name, target


def _check_nodes(nodes) -> int:
    if isinstance(nodes, bool) or not isinstance(nodes, int) or nodes < 1:
        raise InputError(f"{nodes!r}: expected an integer >= 1", field="nodes")
    return nodes


def write_host_machine(target: Path, name: str, progress: Progress, nodes: int = 1,
                       uarch: str | None = None, min_seconds: float = 0.1,
                       dry_run: bool = False, port_model: str | Path | None = None) -> HostMachineResult:
    """Identify and measure this host; write its cluster machine file (dry_run: identify only,
    and return the file that would be written with no measurements; port_model: an OSACA
    architecture file for the in-core analyses, recorded by its digest)."""
    from autotune.tools import cpuprobe, hostprobe
    from autotune.tools.toolchain import package_version
    _check_nodes(nodes)
    t0 = time.perf_counter()
    given = cpuprobe.read_port_model(port_model) if port_model is not None else None
    ident = cpuprobe.identify_cpu(uarch=uarch, port_model=given)
    if ident.record.isa != cpuprobe.this_isa():
        raise InputError(f"{ident.key}: {ident.record.name} is {ident.record.isa}, this host is "
                         f"{cpuprobe.this_isa()}", field="uarch")
    host = hostprobe.detect()
    online = os.cpu_count() or host.cores
    if host.cores < online:
        progress.say(f"warning: this process may run on {host.cores} of the {online} CPUs this host has (its "
                 f"affinity), so the machine file describes {host.cores} core(s); under Slurm give srun "
                 f"--cpus-per-task={online} (or --exclusive with -c) to describe the whole node")
    flags, note = cpuprobe.isa_flags(ident, CC)
    progress.say(f"{ident.cpu.describe()}: {ident.record.name} ({ident.key}"
             + (", assumed with --uarch" if ident.assumed else "") + f"); flags {' '.join(flags)}")
    if ident.borrowed_from:
        progress.say(f"port model borrowed: {ident.borrowed_from}; the in-core times are measured on this CPU")
    if given:
        progress.say(f"port model file {given.path} (OSACA {given.arch}, sha256 {given.sha256[:12]}...)")
    progress.say(f"{host.cores} cores, the OS's clock {host.clock_hz / 1e9:.2f} GHz, caches "
             + ", ".join(f"L{c.level} {c.size // 1024} KiB/{c.shared_by} core(s)" for c in host.caches))
    clock = None if dry_run else hostprobe.measure_clock(host, progress)
    barrier = None if dry_run else barrier_fit(hostprobe.measure_barrier(host, progress))
    scan, bandwidths, found = None, {}, ()
    if not dry_run:
        with hostprobe.stream_exe() as exe:
            scan = hostprobe.measure_capacity(host, progress, min_seconds, exe=exe)
            if scan is not None:
                host = capacity.with_capacity(host, scan)   # measured, and priced, at the capacity the data get
            found = stencils.stencils(host, hostprobe.working_sets(host))
            bandwidths = hostprobe.measure(host, progress, min_seconds, exe=exe, found=found)
    wide = hostmachine.wide_spreads(bandwidths)
    _warn_wide(wide, progress)
    ports = list(given.ports) if given else cpuprobe.osaca_ports(ident.record.osaca)
    data = hostmachine.build(host, ident, flags, note, ports, bandwidths,
                             name, nodes, package_version("kerncraft"), time.strftime("%Y-%m-%d %H:%M:%S %Z"),
                             clock=clock, capacity=scan.describe() if scan else None,
                             capacity_measured=bool(scan and scan.measured), barrier=barrier)
    data = stencils.with_section(data, bandwidths, found)
    if given:
        data = _with_port_model_file(data, given)
    text = (f"# Machine model of {host.model_name or 'this host'} ({ident.record.name}), made by "
            f"autotune calibrate --node.\n# Measured, identified and assumed fields: see 'provenance' "
            f"below.\n" + _dump(data))
    reference = {} if dry_run else _settled(target, text, progress)
    return HostMachineResult(
        machine=name, file=str(target), uarch=ident.to_dict(), flags=flags, cores=host.cores,
        clock_ghz=hostmachine.file_clock_hz(host, clock) / 1e9, nodes=nodes, wall_s=time.perf_counter() - t0,
        dry_run=dry_run, os_clock_ghz=host.clock_hz / 1e9, clock_measured=clock is not None,
        clock_1core_ghz=clock.one_core_hz / 1e9 if clock else None,
        bandwidth_gbs={lvl: {k: rows[-1][2] for k, rows in ks.items()} for lvl, ks in bandwidths.items()},
        bandwidth_1thread_gbs={lvl: {k: rows[0][2] for k, rows in ks.items()} for lvl, ks in bandwidths.items()},
        text=text if dry_run else None, reference_kernels=reference, wide_spreads=wide,
        bandwidth_intervals=_per_point(bandwidths, 4, list),
        last_level=scan.to_dict() if scan else {},
        barrier={} if barrier is None else {"per_doubling_s": barrier["per_doubling_s"],
                                            "seconds": {str(t): v for t, v in barrier["seconds"].items()}},
        bandwidth_runs=_per_point(bandwidths, 5),
        bandwidth_samples=_per_point(bandwidths, 6, list))


def _per_point(bandwidths: dict, field: int, convert=lambda v: v) -> dict:
    """level -> kernel -> one field of each point (specs.hostmachine.Point) at 1, 2, ... threads,
    converted; None where a point (a recorded row) lacks it."""
    return {lvl: {k: [convert(r[field]) if len(r) > field and r[field] else None for r in rows]
                  for k, rows in ks.items()} for lvl, ks in bandwidths.items()}


def barrier_fit(seconds: dict[int, float]) -> dict:
    """The barrier events measured (threads -> seconds) and their fit, t(tau) = c ceil(log2 tau)
    (model.commfit.fit_barrier, as calibrate --threads fits them)."""
    from autotune.model.commfit import fit_barrier
    return dict(fit_barrier(sorted(seconds.items())), seconds=dict(seconds))


UNSETTLED = ".unsettled"   # the suffix of a file whose measurements were kept but whose fit did not end


def _settled(target: Path, text: str, progress: Progress) -> dict:
    """Write the file at `target` once its transfers are settled (pipeline.refkernels): it is
    drafted and fitted in a folder of its own, so `target` only ever holds a finished file.  Where
    the fit does not end (an error, an interrupt), the draft, with every measurement, is kept
    beside `target` as <name>.unsettled, and the error goes on."""
    import tempfile

    from autotune.pipeline.refkernels import settle_transfers
    from autotune.specs.machine import load_machine
    with tempfile.TemporaryDirectory(prefix="autotune-calibrate-") as tmp:
        draft = Path(tmp) / target.name        # kerncraft keys its analyses on the file's name
        write_text(draft, text, "out")
        try:
            load_machine(str(draft))           # the file we wrote must load like any other
            reference = settle_transfers(draft, progress)   # its transfers overlap, checked and set
        except BaseException:
            kept = target.with_name(target.name + UNSETTLED)
            write_text(kept, draft.read_text(), "out", make_folders=True)
            progress.say(f"the measurements are kept in {kept}: the transfers were not settled, so {target} "
                     f"was not written")
            raise
        write_text(target, draft.read_text(), "out", make_folders=True)
    return reference


def _warn_wide(wide: list[dict], progress: Progress, shown: int = 8) -> None:
    """A warning line per bandwidth whose runs spread wider than WIDE_SPREAD (the first `shown`,
    then how many more: the result lists them all)."""
    for w in wide[:shown]:
        progress.say(f"warning: bandwidth {w['level']} {w['kernel']} on {w['threads']} thread(s): its "
                 f"{w.get('runs') or runstats.REPEATS} runs spread {hostmachine.percent(w['spread'])} (max - min over the "
                 f"median, over {hostmachine.percent(hostmachine.WIDE_SPREAD)}); the file keeps the upper quartile, "
                 f"{w['gbps']:.2f} GB/s: was the machine busy?")
    if len(wide) > shown:
        progress.say(f"warning: {len(wide) - shown} more bandwidths spread over "
                 f"{hostmachine.percent(hostmachine.WIDE_SPREAD)} (the result lists them all)")


def _with_port_model_file(data: dict, given) -> dict:
    """The machine file with the port model file it rests on, beside its in-core model (our
    analysis workers point OSACA's model of that name at the file: tools/kerncraft_patches)."""
    from autotune.tools.cpuprobe import PORT_MODEL_FIELD, port_model_entry
    out = {}
    for key, value in data.items():
        out[key] = value
        if key == "in-core model":
            out[PORT_MODEL_FIELD] = port_model_entry(given)
    out["provenance"] = dict(out["provenance"], **{
        "port model": f"OSACA {given.arch} from the file {given.path} (--port-model; sha256 {given.sha256}), "
                      f"not the installed OSACA's"})
    return out


def _numbers_missing(flops) -> bool:
    if not isinstance(flops, dict):
        return True
    return any(not isinstance(v, (int, float)) or isinstance(v, bool)
               for prec in flops.values() if isinstance(prec, dict) for v in prec.values()) or \
        any(not isinstance(prec, dict) for prec in flops.values())


def _incore_osaca(data) -> str | None:
    incore = data.get("in-core model") or {}
    items = list(incore.items()) if isinstance(incore, dict) else [tuple(p) for p in incore]
    return next((str(v) for k, v in items if k == "OSACA"), None)


_COUNTS = ("cores per group", "threads per group", "groups")


def _normalise(data, notes: list[str]) -> None:
    """What kerncraft reads leniently, written the one way the schema takes: a cache line size
    with a unit ('64 B') as bytes, integral counts written as floats (1.0) as integers."""
    from autotune.specs.units import quantity
    changed = set()
    for level in data["memory hierarchy"]:
        cpg = level.get("cache per group") or {}
        for key in ("sets", "ways", "cl_size"):
            v = cpg.get(key)
            if v is not None and not isinstance(v, int):   # '64 B', or kerncraft's PrefixedUnit
                try:                                          # where kerncraft is imported
                    cpg[key] = int(quantity(v if isinstance(v, (str, float)) else str(v), "size"))
                    changed.add(f"cache per group.{key}")
                except ValueError:
                    pass
        for key in _COUNTS:
            v = level.get(key)
            if isinstance(v, float) and v.is_integer():
                level[key] = int(v)
                changed.add(key)
    if changed:
        notes.append("written as plain integers: " + ", ".join(sorted(changed)))


def import_kerncraft(source: Path, target: Path, name: str, nodes: int) -> HostMachineResult:
    """A kerncraft machine file (kerncraft's examples, a colleague's) as a cluster machine: the
    `cluster` section added (network and barrier assumed until calibrated), what kerncraft
    tolerates but the model cannot use filled from the CPU table, with the provenance."""
    import ruamel.yaml

    _check_nodes(nodes)
    t0 = time.perf_counter()
    from autotune.storage.yamlfile import round_trip_yaml

    yaml = round_trip_yaml()
    try:
        with open(source) as f:
            data = yaml.load(f)
    except OSError as e:
        raise InputError(f"{source}: cannot read ({e.strerror})", field="from_kerncraft") from None
    except ruamel.yaml.YAMLError as e:
        raise InputError(f"{source}: not valid YAML ({str(e).splitlines()[0]})", field="from_kerncraft") from None
    if not isinstance(data, dict) or "memory hierarchy" not in data:
        raise InputError(f"{source}: not a kerncraft machine file (no 'memory hierarchy')", field="from_kerncraft")
    if "cluster" in data:
        raise InputError(f"{source}: field 'cluster': already a cluster machine (use it as it is)",
                         field="from_kerncraft")
    osaca = _incore_osaca(data)
    if osaca is None:
        raise InputError(f"{source}: field 'in-core model': expected an OSACA entry (IACA is not "
                         f"supported)", field="from_kerncraft")
    notes = [f"imported from the kerncraft machine file {source.name} on {time.strftime('%Y-%m-%d')}"]
    _normalise(data, notes)
    if not data.get("model name"):
        data["model name"] = f"{source.stem} (the file names no model)"
        notes.append("model name: the file's name (the file gives none)")
    rec = next((u for u in load_table().uarchs.values() if u.osaca and u.osaca.lower() == osaca.lower()), None)
    if _numbers_missing(data.get("FLOPs per cycle")):
        if rec is not None:
            dp = dict(rec.dp_flops)
            data["FLOPs per cycle"] = {"SP": {k: 2 * v for k, v in dp.items()}, "DP": dp}
            notes.append(f"FLOPs per cycle: from autotune's CPU table ({rec.key}: {rec.name}); the file "
                         f"gives none")
        elif "FLOPs per cycle" in data:
            del data["FLOPs per cycle"]
            notes.append("FLOPs per cycle: dropped (the file gives none and the CPU table has no "
                         f"{osaca} record)")
    isa = host_isa(str(data.get("isa") or "x86"))
    cores = int(data.get("sockets") or 1) * int(data.get("cores per socket") or 1)
    data["cluster"] = hostmachine.cluster_section(name, nodes, cores, int(data.get("threads per core") or 1))
    data["provenance"] = {"made": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "imported": "; ".join(notes),
                          "assumed": "network and barrier until calibrated"}
    buf = io.StringIO()
    yaml.dump(data, buf)
    from autotune.specs.loading import parse_yaml
    from autotune.specs.machine import parse_machine
    machine = parse_machine(parse_yaml(buf.getvalue(), source), source, name)   # refused before writing
    write_text(target, f"# Cluster machine '{name}' from the kerncraft machine file {source.name}, made by "
                       f"autotune calibrate --from-kerncraft.\n" + buf.getvalue(), "out", make_folders=True)
    return HostMachineResult(
        machine=name, file=str(target), uarch={"uarch": rec.key if rec else None, "osaca": osaca, "isa": isa,
                                                "name": rec.name if rec else machine.model_name},
        flags=list(machine.isa_flags), cores=cores, clock_ghz=machine.clock_hz / 1e9, nodes=nodes,
        wall_s=time.perf_counter() - t0, dry_run=False, bandwidth_gbs={}, bandwidth_1thread_gbs={},
        imported_from=str(source))
