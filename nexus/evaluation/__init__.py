"""Evaluation: query sets, hit rules, metrics (rank, margin, R@k, MRR), sweeps and reports.

Takes chunks, an index and labelled queries; hands on metric tables for the CLI and dashboard.
"""
