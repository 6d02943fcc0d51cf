"""ctxmode: keep raw tool output out of an AI coding agent's context window."""

__version__ = "0.1.0"
