"""Specifications read from data files: IVPs, ODE methods, machines."""
