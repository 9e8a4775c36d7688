"""benchdash-submit: upload a result bundle to benchdash from CI and report its verdict."""

__version__ = "1.0.0"
