"""Derived objects kept between runs (a pricing layout): pickled, compressed, and read back only
as autotune's own classes and plain containers, so a store another user could write runs no code
of theirs when it is read.  A key names everything the object was derived from, this
installation's code included (code_digest): a changed module or template is a new key, never a
stale object.
"""
from __future__ import annotations

import hashlib
import io
import os
import pickle
import zlib
from functools import lru_cache
from pathlib import Path

_PLAIN = {"builtins": {"tuple", "list", "dict", "set", "frozenset", "int", "float", "str", "bytes", "bool",
                       "complex", "slice", "range", "NoneType"}}


class _OwnClasses(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if module == "autotune" or module.startswith("autotune.") or name in _PLAIN.get(module, ()):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not a class autotune keeps")


def dumps(obj) -> bytes:
    return zlib.compress(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL), 1)


def loads(data: bytes):
    """The object, or None where the data is not one this installation wrote (corrupt, or of
    classes it does not have)."""
    try:
        return _OwnClasses(io.BytesIO(zlib.decompress(data))).load()
    except Exception:      # anything unreadable is a miss: the object is derived again
        return None


@lru_cache(maxsize=1)
def code_digest() -> str:
    """A digest of this installation's modules and templates, and of the variant dimensions kept
    outside the package (their modules' folders: autotune.dimensions.plugin_modules)."""
    from importlib import resources

    from autotune.dimensions import plugin_modules
    from autotune.specs.shipped import shipped_dir
    plugins = sorted({Path(m.__file__).parent for m in plugin_modules() if getattr(m, "__file__", None)})
    return files_digest((Path(str(resources.files("autotune"))), shipped_dir("variants"), *plugins))


def files_digest(folders) -> str:
    """A digest of the .py, .j2 and .yaml files under folders: their names, sizes and modification
    times (a stat each, no reading)."""
    h = hashlib.sha256()
    for folder in folders:
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                if name.endswith((".py", ".j2", ".yaml")):
                    path = os.path.join(dirpath, name)
                    st = os.stat(path)
                    h.update(f"{os.path.relpath(path, folder)}:{st.st_size}:{st.st_mtime_ns};".encode())
    return h.hexdigest()[:32]
