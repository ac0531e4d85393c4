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


_PLAIN_RESOLVER = None


def _plain_resolver():
    """ruamel's round-trip resolver without the implicit tags other libraries add to ruamel as a
    whole: kerncraft, once imported, resolves '2.6 GHz' and '38.50 B/cy' to its '!prefixed' tag,
    so a round trip in the same process would load them as tagged scalars and quote such text
    where it writes it ('38.50 B/cy', which kerncraft then reads as a string and cannot use)."""
    global _PLAIN_RESOLVER
    if _PLAIN_RESOLVER is None:
        from ruamel.yaml.resolver import VersionedResolver

        class PlainResolver(VersionedResolver):
            def resolve(self, kind, value, implicit):
                tag = super().resolve(kind, value, implicit)
                return self.DEFAULT_SCALAR_TAG if getattr(tag, "suffix", tag) == "!prefixed" else tag
        _PLAIN_RESOLVER = PlainResolver
    return _PLAIN_RESOLVER


def round_trip_yaml():
    """A ruamel YAML object for editing a file in place, floats written exactly."""
    import ruamel.yaml
    from ruamel.yaml.scalarfloat import ScalarFloat

    yaml = ruamel.yaml.YAML()
    yaml.Resolver = _plain_resolver()
    yaml.width = 100
    yaml.representer.add_representer(ScalarFloat, _exact_float)
    yaml.representer.add_representer(float, _exact_float)
    return yaml


def dump_text(yaml, data) -> str:
    buf = io.StringIO()
    yaml.dump(data, buf)
    return buf.getvalue()
