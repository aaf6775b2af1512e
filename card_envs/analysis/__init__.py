"""Analysis of agents on reduced settings: exact best responses and exploitability
(:mod:`card_envs.analysis.exploitability`, which needs the ``analysis`` extra: OpenSpiel)."""
