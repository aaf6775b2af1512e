"""Self-play training and evaluation for every card-envs game.

Installed, this package is ``card_envs.training`` (``card-envs train``, ``card-envs evaluate``).
In the repository it is also the top-level ``training`` (``python -m training.train``, the
tests): there that name is an alias (:mod:`training._checkout`), so each module is loaded once,
as ``card_envs.training.<module>``, whichever name imports it. Two copies would make two
``ConfigError`` classes, and checkpoints that pickle a class under a name an install lacks.
"""

if __name__ == "training":  # imported by the checkout's own name, never in an install
    from ._checkout import alias

    alias(__file__)
