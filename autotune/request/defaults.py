"""The defaults and choices a request starts from, in a module that imports nothing: the command
line shows them in its help before it loads any IVP, machine or method."""
from __future__ import annotations

DEFAULT_METHOD = "radauIIA7"
MODELS = ("learned", "ecm")    # --model: the learned factors where the machine has them, or ECM alone
