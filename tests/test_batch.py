"""Batch jobs without a batch system: scripts, time limits, Slurm's answers and the plan state."""
import json
from dataclasses import asdict

import pytest

from autotune.progress import Callbacks
from autotune.errors import InputError, ToolError
from autotune.pipeline import submit
from autotune.request.plan import TunePlanRequest
from autotune.tools import slurm

from .conftest import run_cli


@pytest.mark.parametrize("text, seconds", [("30", 1800), ("30:15", 1815), ("01:02:03", 3723), ("1-2", 93600),
                                           ("1-02:30", 95400), ("2-00:00:01", 172801)])
def test_time_limits_in_sbatch_forms(text, seconds):
    assert slurm.parse_time_limit(text) == seconds


@pytest.mark.parametrize("bad", ["0", "", "1h", "1:2:3:4", "-5", "00:00:00"])
def test_bad_time_limits(bad):
    with pytest.raises(InputError) as e:
        slurm.parse_time_limit(bad)
    assert e.value.field == "time"


def test_time_limit_rounds_up_to_minutes_and_days():
    assert slurm.time_limit(61) == "00:02:00"
    assert slurm.time_limit(600) == "00:10:00"
    assert slurm.time_limit(25 * 3600 + 1) == "1-01:01:00"


def test_states_from_squeue_and_sacct_lines():
    assert slurm.parse_states("12|RUNNING\n13|PENDING\n") == {"12": "RUNNING", "13": "PENDING"}
    # sacct: "CANCELLED by 0", job steps skipped, a trailing + (truncated) dropped
    assert slurm.parse_states("14|CANCELLED by 0\n14.batch|CANCELLED\n15|FAILED+\n") == \
        {"14": "CANCELLED", "15": "FAILED"}
    assert slurm.parse_sbatch("4711\n") == "4711" and slurm.parse_sbatch("4711;cluster2") == "4711"
    with pytest.raises(ToolError):
        slurm.parse_sbatch("sbatch: error: Batch job submission failed")


def test_partition_sizes_from_sinfo_lines():
    # sinfo -h -o %P|%D: the default partition marked *, a partition on several lines adds up
    assert slurm.parse_partition_nodes("all*|4\nsmall|2\nbig|1\nbig|1\n") == ({"all": 4, "small": 2, "big": 2}, "all")
    assert slurm.parse_partition_nodes("") == ({}, None)


# what srun printed in a job (a virtual cluster, Slurm 22.05) while its controller was restarted,
# and after the job had been requeued because one of its nodes failed
UNREACHABLE = ("srun: error: Unable to confirm allocation for job 743324: Unable to contact slurm controller "
               "(connect failure)\nsrun: Check SLURM_JOB_ID environment variable. Expired or invalid job 743324")
REQUEUED = ("srun: error: Unable to confirm allocation for job 743321: Job is pending execution\nsrun: Check "
            "SLURM_JOB_ID environment variable. Expired or invalid job 743321")


def test_an_unreachable_controller_is_told_from_a_job_that_is_gone():
    assert slurm.controller_unreachable(UNREACHABLE)
    assert slurm.controller_unreachable("srun: error: slurm_receive_msg: Socket timed out on send/recv operation")
    assert not slurm.controller_unreachable(REQUEUED)
    assert not slurm.controller_unreachable("srun: error: vn1: tasks 0-1: Illegal instruction")


def test_srun_runner_tries_again_while_the_controller_is_away(monkeypatch):
    from autotune.pipeline import runners
    said, answers = [], [ToolError(f"solver failed (exit 1): srun ...: {UNREACHABLE}"),
                         ToolError(f"solver failed (exit 1): srun ...: {UNREACHABLE}"), {"median_step_s": 0.5}]

    def launch(self, name, rep):
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    monkeypatch.setattr(runners.LaunchRunner, "run", launch)
    monkeypatch.setattr(runners.time, "sleep", lambda s: said.append(f"slept {s:g}"))
    runner = runners.SrunRunner.__new__(runners.SrunRunner)
    runner.progress = Callbacks(say=said.append)
    assert runner.run("v", 0) == {"median_step_s": 0.5}
    assert said == ["srun could not reach the Slurm controller; trying again in 2 s", "slept 2",
                    "srun could not reach the Slurm controller; trying again in 5 s", "slept 5"]
    # a requeued job's srun fails at once; so does one whose controller stays away
    answers[:] = [ToolError(REQUEUED)]
    with pytest.raises(ToolError, match="pending execution"):
        runner.run("v", 0)
    answers[:] = [ToolError(UNREACHABLE)] * 50
    with pytest.raises(ToolError, match="Unable to contact"):
        runner.run("v", 0)
    assert sum(float(s.split()[1]) for s in said if s.startswith("slept")) <= 7 + runners.SrunRunner.RETRY_S


def test_scenario_status_from_store_and_slurm():
    assert submit._status(2, 2, "5", "RUNNING", slurm.STATE_OF) == "done"            # the store decides first
    assert submit._status(0, 1, None, None, slurm.STATE_OF) == "not submitted"
    assert submit._status(0, 1, "5", None, slurm.STATE_OF) == "lost"                 # Slurm forgot it, no results
    assert submit._status(0, 1, "5", "PENDING", slurm.STATE_OF) == "queued"
    assert submit._status(1, 2, "5", "COMPLETING", slurm.STATE_OF) == "running"
    assert submit._status(0, 1, "5", "COMPLETED", slurm.STATE_OF) == "failed"        # finished without storing its runs
    assert submit._status(0, 1, "5", "CANCELLED", slurm.STATE_OF) == "cancelled"
    assert submit._status(0, 1, "5", "TIMEOUT", slurm.STATE_OF) == "failed"


ENTRY = {"id": "heat2d/n=100/nodes=4/threads=8/m", "ivp": "heat2d", "nodes": 4, "threads": 8,
         "run": {"steps": 10, "warmup": 2, "reps": 3, "flags": "-O3", "timeout": 600.0},
         "variants": [{"name": "a", "predicted_s": 2.0}, {"name": "b", "predicted_s": 4.0}]}


def test_job_time_from_predictions_with_floor_and_ceiling():
    # builds 2 x 60 s + start 120 s + 5 x (2 + 4) s x 10 steps x 3 reps = 1140 s
    assert submit.job_seconds(ENTRY) == 1140
    fast = dict(ENTRY, variants=[{"name": "a", "predicted_s": 1e-3}])
    assert submit.job_seconds(fast) == submit.MIN_TIME_S
    slow = dict(ENTRY, run=dict(ENTRY["run"], timeout=10.0), variants=[{"name": "a", "predicted_s": 100.0}])
    assert submit.job_seconds(slow) == max(submit.MIN_TIME_S, 60 + 3 * 10 + 120)   # every run at its timeout


def test_batch_script_of_a_scenario(tmp_path):
    opts = submit.SubmitOptions(partition="short", account="proj1", sbatch_args="--qos=debug --exclusive")
    spec = submit.job_spec(tmp_path / "plan.json", 3, ENTRY, tmp_path / "s.sqlite", opts, machine_nodes=64)
    text = slurm.batch_script(spec)
    for line in ("#SBATCH --nodes=4", "#SBATCH --ntasks=4", "#SBATCH --ntasks-per-node=1",
                 "#SBATCH --cpus-per-task=8", "#SBATCH --time=00:19:00", "#SBATCH --partition=short",
                 "#SBATCH --account=proj1", "#SBATCH --qos=debug", "#SBATCH --exclusive",
                 f"#SBATCH --output={tmp_path}/plan.jobs/scenario-3-%j.out",
                 "export SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK"):
        assert line in text.splitlines()
    assert text.splitlines()[-1].endswith(f"--plan {tmp_path}/plan.json --scenario 3 --store {tmp_path}/s.sqlite "
                                          "--launcher srun --format json")
    one_node = submit.job_spec(tmp_path / "plan.json", 0, ENTRY, tmp_path / "s.sqlite", submit.SubmitOptions(), 1)
    assert (one_node.nodes, one_node.tasks) == (1, 4)          # a one-node machine: every rank on it


def test_jobs_take_whole_nodes_and_run_the_set_up_lines_first(tmp_path):
    """A job times its runs: it asks for whole nodes unless told otherwise (--shared-nodes), once
    even where --sbatch-args says it too; --setup lines run before the solver, a failing one stops
    the job (set -e), and they are kept in the plan's state for the jobs submitted again."""
    opts = submit.SubmitOptions(setup=["module load gcc/13", "source ~/env.sh"])
    text = slurm.batch_script(submit.job_spec(tmp_path / "plan.json", 0, ENTRY, tmp_path / "s.sqlite", opts, 64))
    lines = text.splitlines()
    assert lines.count("#SBATCH --exclusive") == 1
    at = lines.index("module load gcc/13")
    assert lines[at - 2:at + 3] == ["set -e", "# set-up (--setup)", "module load gcc/13", "source ~/env.sh",
                                    "set -eu"] and lines[-1].startswith("exec ")
    again = submit.SubmitOptions(**json.loads(json.dumps(asdict(opts))))       # as the state file keeps them
    assert again == opts
    shared = submit.SubmitOptions(exclusive=False)
    text = slurm.batch_script(submit.job_spec(tmp_path / "plan.json", 0, ENTRY, tmp_path / "s.sqlite", shared, 64))
    assert "#SBATCH --exclusive" not in text and "set -e\n" not in text
    said = submit.SubmitOptions(sbatch_args="--exclusive=user")
    text = slurm.batch_script(submit.job_spec(tmp_path / "plan.json", 0, ENTRY, tmp_path / "s.sqlite", said, 64))
    assert [x for x in text.splitlines() if x.startswith("#SBATCH --exclusive")] == ["#SBATCH --exclusive=user"]
    with pytest.raises(InputError) as e:
        submit.SubmitOptions(setup=["module load a\nrm -rf x"])
    assert e.value.field == "setup"
    with pytest.raises(InputError, match="only with --submit"):
        TunePlanRequest.of("plan.json", setup=["module load x"])
    with pytest.raises(InputError, match="only with --submit"):
        TunePlanRequest.of("plan.json", shared_nodes=True)
    req = TunePlanRequest.of("plan.json", submit="slurm", setup="module load x", shared_nodes=False)
    assert req.setup == ("module load x",) and req.shared_nodes is None


def test_submit_options_checked():
    with pytest.raises(InputError):
        submit.SubmitOptions(scheduler="pbs")
    with pytest.raises(InputError):
        submit.SubmitOptions(time="soon")
    with pytest.raises(InputError):
        submit.SubmitOptions(sbatch_args="--comment='open")


def test_a_state_of_another_plan_is_refused(tmp_path):
    plan = {"scenarios": [ENTRY]}
    (tmp_path / "plan.state.json").write_text(json.dumps({"state_version": 1, "plan_digest": "other"}))
    with pytest.raises(InputError) as e:
        submit.read_state(tmp_path / "plan.json", plan)
    assert "the plan changed since it was submitted" in str(e.value)
    assert submit.read_state(tmp_path / "fresh.json", plan) is None


def test_a_state_version_of_true_is_refused(tmp_path):
    plan = {"scenarios": []}
    (tmp_path / "p.state.json").write_text(json.dumps({"state_version": True, "plan_digest": submit._digest(plan)}))
    with pytest.raises(InputError, match="belongs to another version"):
        submit.read_state(tmp_path / "p.json", plan)
    (tmp_path / "p.state.json").write_text(json.dumps({"state_version": 1, "plan_digest": submit._digest(plan)}))
    assert submit.read_state(tmp_path / "p.json", plan)["state_version"] == 1


@pytest.mark.parametrize("args, message", [
    (["--status"], "--plan P: has no batch jobs to report (submit it with --submit slurm)"),
    (["--partition", "x"], "--partition x: only with --submit"),
    (["--submit", "slurm", "--time", "0"], "--time '0': expected a time limit above zero"),
    (["--scenario", "7"], "--scenario 7: expected scenario indices 0..0, comma-separated"),
    (["--scenario", "0", "--status"], "argument --status: not allowed with argument --scenario"),
    (["--submit", "slurm", "--launcher", "srun -n"], "--launcher 'srun -n': the template must contain {procs}"),
])
def test_batch_option_errors(tmp_path, capsys, args, message):
    plan = tmp_path / "P"
    plan.write_text(json.dumps({"plan_version": 1, "scenarios": [dict(
        ENTRY, ivp_path="x", method="m", machine_path="y", machine="m", n=100)]}))
    try:
        code, out, err = run_cli(capsys, "tune", "--plan", plan, *args, "--store", tmp_path / "s.sqlite")
    except SystemExit as e:                 # argparse's own errors
        code, (out, err) = e.code, capsys.readouterr()
    assert code == 2 and err.strip().splitlines() == [f"autotune: error: {message.replace('P', str(plan), 1)}"]


def test_collecting_from_another_store_is_refused(tmp_path, capsys):
    plan = {"plan_version": 1, "scenarios": [dict(ENTRY, ivp_path="x", method="m", machine_path="y", machine="m",
                                                  n=100)]}
    (tmp_path / "P.json").write_text(json.dumps(plan))
    (tmp_path / "P.state.json").write_text(json.dumps({
        "state_version": 1, "plan_digest": submit._digest(plan), "store": str(tmp_path / "jobs.sqlite"),
        "options": {}, "scenarios": {}}))
    code, out, err = run_cli(capsys, "tune", "--plan", tmp_path / "P.json", "--status", "--store", tmp_path / "o.sqlite")
    assert code == 2 and err.strip() == (f"autotune: error: --store {tmp_path}/o.sqlite: the jobs of "
                                         f"{tmp_path}/P.json write to {tmp_path}/jobs.sqlite; leave --store out "
                                         "or give that one")


def test_a_scenarios_partition_wins_over_the_command_lines(tmp_path):
    opts = submit.SubmitOptions(partition="short")
    own = submit.job_spec(tmp_path / "plan.json", 0, dict(ENTRY, partition="big"), tmp_path / "s.sqlite", opts, 64)
    assert "#SBATCH --partition=big" in slurm.batch_script(own).splitlines() and own.partition == "big"
    for entry in (ENTRY, dict(ENTRY, partition=None)):           # a plan of version 1, or a scenario without one
        assert submit.job_spec(tmp_path / "plan.json", 0, entry, tmp_path / "s.sqlite", opts, 64).partition == "short"
    bare = submit.job_spec(tmp_path / "plan.json", 0, ENTRY, tmp_path / "s.sqlite", submit.SubmitOptions(), 64)
    assert not any(line.startswith("#SBATCH --partition") for line in slurm.batch_script(bare).splitlines())


SIZES = ({"all": 4, "small": 2, "big": 2}, "all")     # sinfo -a -h -o %P|%D on tests/slurm/up --partitions


@pytest.mark.parametrize("nodes, partition, problem", [
    (4, None, None), (4, "all", None), (2, "small", None), (3, "big,all", None),
    (5, None, "asks for 5 nodes and partition all has 4"),
    (3, "small", "asks for 3 nodes and partition small has 2"),
    (3, "small,big", "asks for 3 nodes and partition small has 2"),
    (1, "gpu", "asks for partition gpu, which Slurm does not have (it has: all, big, small)"),
    (1, "small,gpu", "asks for partition gpu, which Slurm does not have (it has: all, big, small)"),
])
def test_partition_problems_by_each_jobs_own_partition(nodes, partition, problem):
    assert slurm.partition_problem(SIZES, nodes, partition) == problem
    assert slurm.partition_problem(({}, None), 99, "any") is None       # sinfo listed nothing: Slurm decides
    assert slurm.partition_problem(({"p": 1}, None), 99, None) is None  # no default partition to judge


class FakeSlurm:
    """Slurm's answers for submit_plan: partitions as SIZES, every script kept, no job known."""
    STATE_OF = slurm.STATE_OF
    batch_script = staticmethod(slurm.batch_script)
    partition_problem = staticmethod(slurm.partition_problem)

    def __init__(self):
        self.scripts: list[str] = []

    def partitions(self):
        return SIZES

    def submit(self, script: str) -> str:
        self.scripts.append(open(script).read())
        return str(100 + len(self.scripts))

    def job_states(self, ids):
        return {}


def _partitioned_plan(tmp_path, *partitions_and_nodes) -> tuple:
    from autotune.specs.machine import load_machine
    machine = load_machine("haswell-ep-e5-2630v3")
    scenarios = [dict(ENTRY, id=f"s{i}", ivp_path="x", method="m", machine_path=machine.path, machine=machine.name,
                      n=100, nodes=nodes, partition=partition)
                 for i, (partition, nodes) in enumerate(partitions_and_nodes)]
    path = tmp_path / "P.json"
    path.write_text(json.dumps({"plan_version": 2, "scenarios": scenarios}))
    return path, json.loads(path.read_text())


def test_submitting_puts_each_scenario_in_its_own_partition(tmp_path, capsys, monkeypatch):
    fake = FakeSlurm()
    monkeypatch.setitem(submit.SCHEDULERS, "slurm", fake)
    plan, _ = _partitioned_plan(tmp_path, ("small", 2), (None, 4), ("big", 1))
    code, out, err = run_cli(capsys, "tune", "--plan", plan, "--submit", "slurm", "--partition", "all",
                             "--store", tmp_path / "s.sqlite", "--format", "json")
    assert code == 0, err
    lines = [[line for line in s.splitlines() if line.startswith(("#SBATCH --partition", "#SBATCH --nodes"))]
             for s in fake.scripts]
    assert lines == [["#SBATCH --nodes=2", "#SBATCH --partition=small"],
                     ["#SBATCH --nodes=4", "#SBATCH --partition=all"],      # none of its own: --partition
                     ["#SBATCH --nodes=1", "#SBATCH --partition=big"]]
    assert json.loads(out)["submitted"] == ["0 -> 101", "1 -> 102", "2 -> 103"]


def test_a_scenario_bigger_than_its_own_partition_is_refused_before_submitting(tmp_path, capsys, monkeypatch):
    fake = FakeSlurm()
    monkeypatch.setitem(submit.SCHEDULERS, "slurm", fake)
    # 3 nodes fit the default partition (all, 4 nodes) but not small (2)
    plan, _ = _partitioned_plan(tmp_path, (None, 3), ("big", 2), ("small", 3))
    code, out, err = run_cli(capsys, "tune", "--plan", plan, "--submit", "slurm", "--store", tmp_path / "s.sqlite")
    assert code == 2 and err.strip().splitlines() == [
        f"autotune: error: --plan {plan}: scenario 2 asks for 3 nodes and partition small has 2: nothing submitted"]
    assert fake.scripts == [] and not (tmp_path / "P.state.json").exists()
    plan, _ = _partitioned_plan(tmp_path, ("small", 1), ("gpu", 1))
    code, out, err = run_cli(capsys, "tune", "--plan", plan, "--submit", "slurm", "--store", tmp_path / "s.sqlite")
    assert code == 2 and "scenario 1 asks for partition gpu, which Slurm does not have" in err and fake.scripts == []
