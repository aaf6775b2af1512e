"""The game-independent layer: cards, options, memory, the engine base class, and the one
AEC env and one Gymnasium env every game shares."""
