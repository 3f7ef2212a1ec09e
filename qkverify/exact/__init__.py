"""Exact arithmetic: rationals, rational matrices, inertia, real algebraic
numbers and rigorous enclosures.  Nothing in this package knows about
attention heads."""
