"""The defaults and choices a request starts from, in a module that imports nothing: the command
line shows them in its help before it loads any IVP, machine or method."""
from __future__ import annotations

DEFAULT_METHOD = "radauIIA7"
DEFAULT_WITHIN_PCT = 10.0       # the pre-selection: within this many percent of the best
SCALE_NODES = "1:64"   # scale's node counts where none are given (the command line's and the API's)
TABLE_ROWS = 18   # rank's default table: the pre-selected variants, then the next ones, this many rows in all
MODELS = ("learned", "ecm")    # --model: the learned factors where the machine has them, or ECM alone
