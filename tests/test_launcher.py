import pytest

from autotune.errors import InputError
from autotune.tools.launcher import parse_launcher


def test_default_and_presets_build_argv():
    cmd = ["python", "-m", "benchmarks_mpi.allgather"]
    assert parse_launcher(None).argv(4, cmd) == ["mpiexec", "-n", "4"] + cmd
    assert parse_launcher("srun").argv(8, cmd, nodes=8) == ["srun", "--mpi=pmi2", "-N", "8", "-n", "8"] + cmd
    assert parse_launcher("srun").argv(2, cmd, nodes=1, pmi="pmix")[:2] == ["srun", "--mpi=pmix"]
    assert parse_launcher("srun").needs_pmi and not parse_launcher(None).needs_pmi
    custom = parse_launcher("srun -N {nodes} -n {procs} --ntasks-per-node={ppn} --cpu-bind=cores")
    assert " ".join(custom.argv(16, ["x"], nodes=4)) == "srun -N 4 -n 16 --ntasks-per-node=4 --cpu-bind=cores x"
    assert parse_launcher("mpirun -np {procs} --oversubscribe").argv(2, ["a b"]) == \
        ["mpirun", "-np", "2", "--oversubscribe", "a b"]


@pytest.mark.parametrize("bad", ["mpiexec -n 4", "mpiexec -n {procs} {cores}", "mpiexec 'unclosed {procs}", ""])
def test_bad_templates(bad):
    with pytest.raises(InputError):
        parse_launcher(bad if bad else " ")


@pytest.mark.parametrize("version, pmi", [
    ("MPICH Version:      4.3.0", "pmi2"),
    ("Open MPI v5.0.3, package: Open MPI root@x Distribution", "pmix"),
    ("Intel(R) MPI Library 2021.10 for Linux* OS", "pmi2"),
    ("MVAPICH2 Version      :\t2.3.7", "pmi2"),
    ("", "pmi2"),
])
def test_pmi_plugin_of_the_mpi_library(version, pmi):
    from autotune.tools.mpiinfo import pmi_for
    assert pmi_for(version) == pmi


def test_this_python_mpi_is_known_and_srun_preset_gets_its_plugin(monkeypatch):
    from autotune.tools import mpiinfo
    version = mpiinfo.library_version()
    assert version and "MPICH" in version          # the mpich wheel the project installs
    monkeypatch.delenv(mpiinfo.ENV_OVERRIDE, raising=False)
    argv = mpiinfo.launch_argv(parse_launcher("srun"), 2, ["x"], 1)
    assert argv[1:] == ["--mpi=pmi2", "-N", "1", "-n", "2", "x"]
    monkeypatch.setenv(mpiinfo.ENV_OVERRIDE, "pmix")
    assert mpiinfo.launch_argv(parse_launcher("srun"), 2, ["x"], 1)[1] == "--mpi=pmix"


def test_world_size_message_names_the_cause():
    from autotune.tools.mpiinfo import world_size_error
    msg = world_size_error("allgather benchmark", 2, 1, 2, ["srun", "-n", "2", "python"])
    assert msg.startswith("allgather benchmark ran in 2 separate MPI worlds of 1 rank(s), not one of 2")
    assert "--mpi=pmi2" in msg and msg.endswith("srun -n 2 python")
