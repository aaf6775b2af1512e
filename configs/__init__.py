"""The shipped training configs (installed as ``card_envs.configs``): ``card-envs train roy``
reads ``roy.yaml`` from here."""
