"""Suites: YAML files that bind record fields to metrics; the built-in ones live here."""

from .spec import BuiltSuite, SuiteSpec, builtin_suites, load_suite

__all__ = ["BuiltSuite", "SuiteSpec", "builtin_suites", "load_suite"]
