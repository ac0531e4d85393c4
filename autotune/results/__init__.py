"""Typed results of the pipeline (rank, explain, sweep, scale, tune, plan, calibrate), each with
to_dict() (what the JSON output prints) and to_frame() (a pandas DataFrame)."""
