"""``nexus setup``: what a first answer must not wait for, done once at install time.

The fast tier (``nexus mcp``'s default) answers from a static model distilled from the
bundled MiniLM (minutes on two cores), and re-scoring embeds queries with MiniLM exported
to ONNX (seconds). Distilled on the way to a first answer, an MCP
client waited three minutes; ``scripts/dev.sh`` runs this verb, and the README names it,
so the model lies in the user's cache folder before any server starts.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def cmd_setup(args: argparse.Namespace) -> int:
    from nexus.cli.cache import cache_folder
    from nexus.retrieval import onnx_minilm, tiers

    folder = cache_folder(args)
    model = tiers.models_dir(folder) / tiers.STATIC_MODEL_NAME
    if model.is_dir():
        print(f"the fast tier's model is ready: {model}")
    else:  # looked up here, not bound as a default: tests replace it on the module
        tiers.ensure_static_model(model.parent, say=print, distil=tiers.distil_from_minilm)
    # Re-scoring embeds each query with MiniLM exported to ONNX (no torch in a server).
    graph = onnx_minilm.ensure_onnx_model(tiers.models_dir(folder), say=print)
    print(f"MiniLM's query model for re-scoring is ready: {graph}")
    print(f"cache folder: {folder} (indexes, vectors, models; --cache or $NEXUS_CACHE_DIR)")
    _warn_if_clients_look_elsewhere(folder)
    return 0


def _warn_if_clients_look_elsewhere(folder: Path) -> None:
    """MCP clients start servers with HOME and PATH only: a cache named by
    ``--cache``, ``$NEXUS_CACHE_DIR`` or ``$XDG_CACHE_HOME`` is not where they look."""
    from platformdirs import user_cache_path

    clients = user_cache_path("nexus", appauthor=False)
    if sys.platform == "linux":  # XDG_CACHE_HOME does not reach the server either
        clients = Path.home() / ".cache" / "nexus"
    if folder.resolve() != clients.resolve():
        print(
            f"note: an MCP client that passes only HOME and PATH looks in {clients}; "
            f"give the server --cache {folder} (or NEXUS_CACHE_DIR in its env) to use this one"
        )
