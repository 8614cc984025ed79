"""Datasets of the course: a checked download registry and one loader module per dataset."""

from fromscratch.data.registry import REGISTRY, DataError, Dataset, cache_dir, extract, fetch, register

__all__ = ["REGISTRY", "DataError", "Dataset", "cache_dir", "extract", "fetch", "register"]
