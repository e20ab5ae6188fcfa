"""Retold memory for agent frameworks.

`retold.adapters.base` holds what every adapter shares; `retold.adapters.deepagents` and
`retold.adapters.crewai` integrate one framework each and import it only when used.
"""

from retold.adapters.base import (
    Answer,
    MemorySession,
    Principal,
    PrincipalError,
    Retold,
    RetoldError,
    ScopeNotWritable,
    Unreachable,
    derive_principal,
)

__all__ = [
    "Answer",
    "MemorySession",
    "Principal",
    "PrincipalError",
    "Retold",
    "RetoldError",
    "ScopeNotWritable",
    "Unreachable",
    "derive_principal",
]
