"""Dogpile: a real-time digging game, discretised into ticks (AEC and Parallel views)."""
