"""Rigid-body modelling: spatial algebra, joints, trees, parsing, dynamics algorithms and plants."""

__all__: list[str] = []
