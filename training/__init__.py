"""Self-play training and evaluation for every card-envs game (run from the repo root)."""
