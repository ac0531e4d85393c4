"""Orchestration: predict, sweep, scale, plan, tune, calibrate.  Builds typed results; renders nothing."""
