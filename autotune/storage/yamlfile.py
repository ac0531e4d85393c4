"""Machine files edited in place (calibrate, calibrate --from-runs, imported kerncraft files):
ruamel's round trip keeps comments, order and layout, but writes floats it read back in its own
format, which can change the last digit of a number the edit did not touch (7.00683833402276e-11
became ...275e-11, and with it every prediction that uses it).  Here every float is written as
the shortest text that reads back as the same number."""
from __future__ import annotations

import io
import math


def _exact_float(representer, value):
    x = float(value)
    if math.isnan(x):
        text = ".nan"
    elif math.isinf(x):
        text = ".inf" if x > 0 else "-.inf"
    else:
        text = repr(x)
    return representer.represent_scalar("tag:yaml.org,2002:float", text)


def round_trip_yaml():
    """A ruamel YAML object for editing a file in place, floats written exactly."""
    import ruamel.yaml
    from ruamel.yaml.scalarfloat import ScalarFloat

    yaml = ruamel.yaml.YAML()
    yaml.width = 100
    yaml.representer.add_representer(ScalarFloat, _exact_float)
    yaml.representer.add_representer(float, _exact_float)
    return yaml


def dump_text(yaml, data) -> str:
    buf = io.StringIO()
    yaml.dump(data, buf)
    return buf.getvalue()
