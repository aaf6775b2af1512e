"""Memory-Uno: face-down hands, peeks, blind swaps, quick-play throws and round calls."""
