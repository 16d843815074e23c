"""Analytical models beside the simulator (docs/models/analytic.md)."""
