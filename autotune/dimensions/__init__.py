"""The variant dimensions, one module each (docs/design.md#variant-dimensions)."""
