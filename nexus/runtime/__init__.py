"""Runtime: work that outgrows one call: streaming workers, Ray Data, background builds.

Takes a repository and settings; hands on chunks and indexes built in parallel or in the
background, within a memory budget.
"""
