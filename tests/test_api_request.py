"""The Python API takes the request objects the command line builds: each entry point gives the
same result for a request as for its keywords (and, where the pipeline is stood in for, asks the
pipeline exactly what the command line asks); one builder per request serves both front ends;
no public function takes more than 12 parameters (recorded kerncraft results: no analysis runs)."""
import argparse
import inspect
import json

import pytest

import autotune
from autotune.cli.main import build_parser
from autotune.request.commands import RankRequest, TuneRequest
from autotune.request.calibrate import CalibrateRequest
from autotune.request.generate import GenerateRequest
from autotune.request.run import RunOptions
from autotune.request.scenario import ScenarioRequest
from autotune.request.selection import Sample, selection

from .conftest import run_cli

MOST_PARAMETERS = 12


def test_no_public_function_takes_more_than_12_parameters():
    functions = {name: getattr(autotune, name) for name in autotune.__all__
                 if inspect.isfunction(getattr(autotune, name))}
    assert {"rank", "sweep", "scale", "explain", "tune", "calibrate", "learn"} <= set(functions)
    counts = {name: len(inspect.signature(f).parameters) for name, f in functions.items()}
    assert {n: c for n, c in counts.items() if c > MOST_PARAMETERS} == {}, counts
    # no hidden **kwargs that would take any number of keywords past the count
    assert not [n for n, f in functions.items() if any(p.kind == p.VAR_KEYWORD
                                                       for p in inspect.signature(f).parameters.values())]


def test_requests_and_results_are_exported():
    for name in ("ScenarioRequest", "RankRequest", "TuneRequest", "CalibrateRequest", "RunOptions",
                 "RankResult", "ExplainResult", "RankSet", "SweepResult", "ScaleResult", "TuneResult",
                 "CalibrateResult", "LearnResult", "HostMachineResult", "PlanResult"):
        assert name in autotune.__all__ and inspect.isclass(getattr(autotune, name)), name
    assert autotune.TuneRequest is TuneRequest and autotune.RankResult.__module__ == "autotune.results.rank"
    namespace = {}
    exec("from autotune import *", namespace)
    assert set(autotune.__all__) - set(namespace) == set()
    with pytest.raises(AttributeError):
        autotune.NoSuchResult


# --- rank, sweep, scale, explain: the same result from keywords and from a request ----------------

def test_rank_takes_a_request(replay_store, capsys):
    by_keywords = autotune.rank("heat2d", nodes=8, top=5, store=replay_store).to_dict()
    for request, keywords in ((RankRequest.of("heat2d", nodes=8, top=5), {}),
                              (RankRequest(ScenarioRequest("heat2d", nodes=8), selection(top=5)), {}),
                              (RankRequest.of("heat2d", nodes=2, within=1), {"nodes": 8, "top": 5})):
        assert autotune.rank(request, store=replay_store, **keywords).to_dict() == by_keywords
    scenario = ScenarioRequest("heat2d", nodes=8)
    assert autotune.rank(scenario, top=5, store=replay_store).to_dict() == by_keywords
    code, cli, err = run_cli(capsys, "rank", "--ivp", "heat2d", "--nodes", "8", "--top", "5", "--format", "json",
                             "--store", replay_store)
    assert code == 0, err
    assert {k: v for k, v in json.loads(cli).items() if k != "meta"} == json.loads(json.dumps(by_keywords))
    # a field that is no keyword of rank goes through the request: model ecm, a comm scheme
    ecm = autotune.rank(ScenarioRequest("heat2d", nodes=8, comm="neighbour", model="ecm"), store=replay_store)
    assert {v.variant.comm for v in ecm.ordered} == {"neighbour"}


def test_sweep_takes_a_request(replay_store):
    keywords = dict(n="3e7:3.6e7:3log", nodes=[4, 8], top=3, selected_only=True)
    by_keywords = autotune.sweep(["heat2d", "inverterchain"], store=replay_store, **keywords).to_frame()
    request = RankRequest.of(["heat2d", "inverterchain"], **keywords)
    assert request.selected_only and request.rule == selection(top=3)
    by_request = autotune.sweep(request, store=replay_store).to_frame()
    assert by_request.equals(by_keywords) and len(by_keywords) == 2 * 3 * 2 * 3
    # within goes through the request; the keyword top replaces it
    within = RankRequest.of("heat2d,inverterchain", n="3e7:3.6e7:3log", nodes=[4, 8], within=0, selected_only=True)
    assert autotune.sweep(within, top=3, store=replay_store).to_frame().equals(by_keywords)


def test_scale_and_explain_take_a_scenario_request(replay_store):
    by_keywords = autotune.scale("heat2d", n=35808256, nodes="1:8", store=replay_store).to_dict()
    request = ScenarioRequest("heat2d", n=35808256, nodes="1:8")
    assert autotune.scale(request, store=replay_store).to_dict() == by_keywords
    e = autotune.explain("heat2d", nodes=8, variant="lc=jil,comm=neighbour", store=replay_store).to_dict()
    assert autotune.explain(ScenarioRequest("heat2d", nodes=8), variant="lc=jil,comm=neighbour",
                            store=replay_store).to_dict() == e


# --- tune and calibrate: the pipeline stood in for, what it is asked compared ---------------------

class Asked(Exception):
    """Raised by a stand-in of the pipeline with what it was asked."""


def _ask(call, *args, **kwargs):
    """What the stood-in pipeline step was asked when `call` reached it."""
    with pytest.raises(Asked) as e:
        call(*args, **kwargs)
    return e.value.args


@pytest.fixture()
def asked_to_tune(monkeypatch):
    """tune's pipeline without building: what it is asked to run (the ranking's scenario and
    pre-selection, the variants chosen, the run plan, the sample, the baseline)."""
    import autotune.pipeline.tune as pipeline_tune

    def stand_in(ranked, chosen, plan, store, progress, sample=None, baseline=False, **_):
        sc = ranked.scenario
        raise Asked((sc.ivp.name, sc.method.name, sc.machine.name, sc.n, sc.nodes, sc.threads), ranked.rule,
                    sorted(ranked.preselected), sorted(v.name for v in chosen), plan, sample, baseline)
    monkeypatch.setattr(pipeline_tune, "tune", stand_in)

    return _ask


def test_tune_takes_a_request(replay_store, asked_to_tune, capsys):
    by_keywords = asked_to_tune(autotune.tune, "heat2d", nodes=8, top=3, reps=5, store=replay_store)
    assert by_keywords[3] == by_keywords[2] and len(by_keywords[3]) == 3 and by_keywords[4].reps == 5
    for request in (TuneRequest.of("heat2d", nodes=8, top=3, reps=5),
                    TuneRequest(ScenarioRequest("heat2d", nodes=8), selection(top=3), RunOptions(reps=5)),
                    ScenarioRequest("heat2d", nodes=8)):
        if isinstance(request, ScenarioRequest):
            got = asked_to_tune(autotune.tune, request, top=3, reps=5, store=replay_store)
        else:
            got = asked_to_tune(autotune.tune, request, store=replay_store)
        assert got == by_keywords
    # the command line asks the pipeline the same
    assert asked_to_tune(run_cli, capsys, "tune", "--ivp", "heat2d", "--nodes", "8", "--top", "3", "--reps", "5",
                         "--store", replay_store) == by_keywords
    # the rare fields: one request, from the API's keywords and from the command line's options
    rare = dict(threads=4, steps=20, warmup=3, h=1e-4, flags="-O2 -fopenmp", timeout=30.0, sample=2, seed=7,
                baseline=True, within=5.0)
    request = TuneRequest.of("heat2d", nodes=8, **rare)
    assert request.sample == Sample(2, 7) and request.run == RunOptions(steps=20, warmup=3, h=1e-4,
                                                                        flags="-O2 -fopenmp", timeout=30.0)
    by_request = asked_to_tune(autotune.tune, request, store=replay_store)
    by_cli = asked_to_tune(run_cli, capsys, "tune", "--ivp", "heat2d", "--nodes", "8", "--threads", "4",
                           "--steps", "20", "--warmup", "3", "--h", "1e-4", "--flags", "-O2 -fopenmp",
                           "--timeout", "30", "--sample", "2", "--seed", "7", "--baseline", "--within", "5",
                           "--store", replay_store)
    assert by_request == by_cli and by_request[5] == Sample(2, 7) and by_request[6] is True
    assert by_request[4].steps == 20 and by_request[4].flags == ("-O2", "-fopenmp") and by_request[4].h == 1e-4
    named = ["lc=jil,comm=neighbour", "lc=jli,comm=allgather"]
    assert asked_to_tune(autotune.tune, "heat2d", nodes=8, variants=named, store=replay_store)[3] == named
    assert asked_to_tune(autotune.tune, TuneRequest.of("heat2d", nodes=8, variants=";".join(named)),
                         store=replay_store)[3] == named


@pytest.fixture()
def asked_to_calibrate(monkeypatch):
    """calibrate's pipeline without running a benchmark: the plan, the file it writes, fresh, raw."""
    import autotune.pipeline.calibrate as pipeline_calibrate

    def stand_in(plan, store, target, say, fresh=False, raw_out=None):
        raise Asked(plan.machine.name, plan.launcher, plan.procs, plan.threads, plan.ops, plan.min_bytes,
                    plan.max_bytes, plan.factor, plan.max_seconds, plan.timeout, plan.nodes, str(target), fresh,
                    raw_out and str(raw_out))
    monkeypatch.setattr(pipeline_calibrate, "calibrate", stand_in)

    return _ask


def test_calibrate_takes_a_request(asked_to_calibrate, tmp_path, capsys):
    out, raw, store = tmp_path / "m.yaml", tmp_path / "raw.jsonl", tmp_path / "s.sqlite"
    by_keywords = asked_to_calibrate(autotune.calibrate, "zen4-epyc-vm-2core", procs="2,4", threads=[1, 2],
                                     ops="allgather,neighbour,pairwise,allreduce", out=out, raw=raw, fresh=True,
                                     store=store)
    assert by_keywords[2] == (2, 4) and by_keywords[11] == str(out) and by_keywords[12] is True
    request = CalibrateRequest.of("zen4-epyc-vm-2core", procs="2,4", threads="1,2", out=str(out), raw=raw,
                                  fresh=True)
    assert asked_to_calibrate(autotune.calibrate, request, store=store) == by_keywords
    assert asked_to_calibrate(run_cli, capsys, "calibrate", "--machine", "zen4-epyc-vm-2core", "--procs", "2,4",
                              "--out", out, "--raw", raw, "--fresh", "--store", store) == by_keywords
    # message sizes and the timeout go through the request
    sizes = dict(min_bytes=64, max_bytes=2**20, factor=4.0, max_seconds=0.05, timeout=60.0)
    by_request = asked_to_calibrate(autotune.calibrate, CalibrateRequest.of("zen4-epyc-vm-2core", **sizes),
                                    out=out, store=store)
    assert by_request[5:10] == (64, 2**20, 4.0, 0.05, 60.0)
    assert asked_to_calibrate(run_cli, capsys, "calibrate", "--machine", "zen4-epyc-vm-2core", "--min-bytes", "64",
                              "--max-bytes", 2**20, "--factor", "4", "--max-seconds", "0.05", "--timeout", "60",
                              "--out", out, "--store", store) == by_request
    with pytest.raises(autotune.InputError) as e:        # checked as the keyword is
        autotune.calibrate(CalibrateRequest.of("zen4-epyc-vm-2core", factor=1.0), out=out, store=store)
    assert e.value.field == "factor"


# --- the builders --------------------------------------------------------------------------------

@pytest.mark.parametrize("request_", [
    ScenarioRequest.of("heat2d", n="1e6:1e7:3log", nodes=[2, 4], model="ecm"),
    RankRequest.of("heat2d", nodes=8, top=3, selected_only=True),
    RankRequest.of("all", within=2.5),
    TuneRequest.of("heat2d", nodes=8, all=True, reps="auto", budget="90s", baseline=True),
    TuneRequest.of("heat2d", variants=["lc=jil,comm=neighbour"], h=1e-3, replay=True),
    TuneRequest.of("heat2d", sample=3, seed=1, launcher="srun"),
    CalibrateRequest.of("zen4-epyc-vm-2core", procs=[2, 4], raw="r.jsonl"),
    GenerateRequest.of("heat2d", n=100, likwid=True),
    GenerateRequest.of("heat2d", online=3, recheck=5),
    GenerateRequest.of("heat2d", online=True),
], ids=lambda r: type(r).__name__)
def test_a_request_reads_back_as_the_keywords_that_build_it(request_):
    kind = type(request_)
    assert kind.of(**request_.as_keywords()) == request_ == kind.of(request_)
    assert set(request_.as_keywords()) <= set(kind.keyword_names())
    with pytest.raises(TypeError, match="unexpected keyword 'nodez'"):
        kind.of(request_, nodez=3)


def test_keywords_replace_the_requests_fields():
    base = TuneRequest.of("heat2d", nodes=8, top=3, steps=20, sample=2)
    assert TuneRequest.of(base, nodes=16).scenario.nodes == 16 and TuneRequest.of(base, nodes=16).run.steps == 20
    assert TuneRequest.of(base, within=5).rule == selection(within=5)          # one rule replaces the other
    assert TuneRequest.of(base, nodes=None) == base                            # None: not given
    assert RankRequest.of(ScenarioRequest("heat2d", method="radauIIA5"), top=2).scenario.method == "radauIIA5"
    with pytest.raises(autotune.InputError) as e:
        RankRequest.of(nodes=8)
    assert e.value.field == "ivp"
    with pytest.raises(TypeError, match="RankRequest"):        # a tune request carries what rank cannot take
        RankRequest.of(base)
    with pytest.raises(autotune.InputError) as e:
        TuneRequest.of("heat2d", comm="neighbour")
    assert e.value.field == "comm"
    with pytest.raises(autotune.InputError) as e:              # checked when built directly too
        TuneRequest(ScenarioRequest("heat2d"), selection(all=True), sample=Sample(2))
    assert e.value.field == "sample"


# the request keywords a command's options do not set (the API's alone), each with its reason
API_ONLY = {
    ("rank", RankRequest): {"all"},                 # rank's --all lists every row (a table option)
    ("tune", TuneRequest): {"comm"},                # refused: tune names variants or filters them
    ("scale", ScenarioRequest): set(),
    ("explain", ScenarioRequest): {"comm", "variant_filter"},   # one variant, named
    ("calibrate", CalibrateRequest): set(),
}


@pytest.mark.parametrize("command,kind", list(API_ONLY), ids=lambda x: getattr(x, "__name__", x))
def test_every_request_keyword_is_an_option_of_the_same_name(command, kind):
    """The command line hands its options to the request's builder by name: an option renamed
    on one side only would silently stop reaching the request."""
    parser = build_parser(complete=True)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    dests = {a.dest for a in sub._actions}
    assert set(kind.keyword_names()) - dests == API_ONLY[(command, kind)]


# ---------------------------------------------------------------- the rules between options, in request/


def test_the_rules_between_options_hold_for_both_front_ends(tmp_path):
    """A rule lives with its request, so the API meets it as the command line does: a negative
    measuring time for calibrate_node (the command line alone checked it), the online solver's
    options without --online, the batch options without --submit, tune's three forms."""
    from autotune.request.generate import GenerateRequest
    from autotune.request.plan import TunePlanRequest, tune_form
    with pytest.raises(autotune.InputError) as e:
        autotune.calibrate_node("host", min_seconds=-1, out=tmp_path / "m.yaml")
    assert e.value.field == "min_seconds" and not (tmp_path / "m.yaml").exists()
    with pytest.raises(autotune.InputError) as e:
        autotune.calibrate_node("host", min_seconds=float("nan"), out=tmp_path / "m.yaml")
    assert e.value.field == "min_seconds"
    for given, field in ((dict(within=5.0), "within"), (dict(recheck=3), "recheck"), (dict(nodes=2), "nodes")):
        with pytest.raises(autotune.InputError, match="only with --online") as e:
            GenerateRequest.of("heat2d", **given)
        assert e.value.field == field
    assert GenerateRequest.of("heat2d", online=True).online == selection()   # --online alone: the default rule
    with pytest.raises(autotune.InputError, match="expected K from 1 to 8") as e:    # 0 is not "not given"
        GenerateRequest.of("heat2d", online=0)
    assert e.value.field == "online"
    with pytest.raises(autotune.InputError, match="only with --online") as e:
        GenerateRequest.of("heat2d", within=0.0)
    assert e.value.field == "within"
    assert GenerateRequest.of("heat2d", online=3).online == selection(top=3)
    with pytest.raises(autotune.InputError):
        GenerateRequest.of("heat2d", online=9)
    with pytest.raises(autotune.InputError) as e:
        TunePlanRequest.of("plan.json", partition="short")
    assert e.value.field == "partition"
    assert TunePlanRequest.of("plan.json", partition="short", submit="slurm").partition == "short"
    assert tune_form(ivp="heat2d") == "scenario" and tune_form(plan="p.json") == "plan"
    assert tune_form(ingest="run.json") == "ingest"
    for given, field in ((dict(ingest="run.json", ivp="heat2d"), "ingest"), (dict(plan="p", sample=3), "sample"),
                         (dict(plan="p", baseline=True), "baseline"), (dict(ivp="heat2d", recheck=5), "recheck"),
                         (dict(ivp="heat2d", online=True, plot="p.png"), "plot")):
        with pytest.raises(autotune.InputError) as e:
            tune_form(**given)
        assert e.value.field == field, given
    with pytest.raises(autotune.InputError, match="give --ivp"):
        tune_form()
    for given, field in ((dict(sample=2), "sample"), (dict(baseline=True), "baseline")):
        with pytest.raises(autotune.InputError, match="not with --online") as e:
            TuneRequest.of("heat2d", online=True, **given)
        assert e.value.field == field


def test_generate_through_the_api_writes_what_the_command_line_writes(tmp_path, capsys):
    res = autotune.generate("inverterchain", n=4096, out=tmp_path / "api")
    assert isinstance(res, autotune.GenerateResult) and res.n == 4096 and len(res.to_frame()) == len(res.variants)
    code, out, _ = run_cli(capsys, "generate", "--ivp", "inverterchain", "--n", "4096", "--out", tmp_path / "cli")
    assert code == 0 and out.startswith(f"wrote {res.parts} kernel parts and {res.solvers} solvers")
    api_files = sorted(p.relative_to(tmp_path / "api") for p in (tmp_path / "api").rglob("*.c"))
    assert api_files and api_files == sorted(p.relative_to(tmp_path / "cli") for p in (tmp_path / "cli").rglob("*.c"))
    assert all((tmp_path / "api" / p).read_bytes() == (tmp_path / "cli" / p).read_bytes() for p in api_files)
    with pytest.raises(autotune.InputError) as e:       # one size: generate writes one set of solvers
        autotune.generate("inverterchain", n="4096,8192", out=tmp_path / "two")
    assert e.value.field == "n" and not (tmp_path / "two").exists()
