"""Deluxe Memory (Jonathan Leistiko): Memory with a poker deck, tokens and the Mixed Chart."""
