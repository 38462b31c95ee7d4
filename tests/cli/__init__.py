"""The command line (referee.cli and its commands): play, settings, check, help, starter kits, packages, the CI
template, the API docs.
"""
