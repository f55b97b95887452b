"""Chunk edges stay on unit edges (issue 41, item 9): the small tail of a split function
joins its own function, a leading comment rides with its definition, consecutive chunks
do not share a line unless no line break can take the cut, and, over every test
repository, no chunk starts inside another unit.

The fixtures reproduce what a user saw: flask's ``Config.from_file`` chunk began with the
loop that ends ``from_object``; excalidraw's ``App.getElementAtPosition`` with lines of
``handleTextAutoResizeHandlePointerDown``, and its ``// NOTE: Hot path`` comment sat in the
chunk before.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nexus.chunking.analysis import analyze
from nexus.chunking.edges import edge_report, foreign_unit, stranded_rider
from nexus.chunking.pipeline import chunk_analysis
from nexus.chunking.profiles import PROFILE_NAMES
from nexus.config import ChunkConfig
from nexus.ingest.sources import open_repository
from tests.chunking.test_chunking_invariants import check_invariants
from tests.helpers import analyze_text

# Shaped after flask's config.py: a method whose small tail is left when it is split,
# then a method that is split too.
CONFIG_METHODS = '''\
class Config(dict):
    """Works exactly like a dict but provides ways to fill it from files."""

    def from_object(self, obj: object | str) -> None:
        """Updates the values from the given object.  An object can be of one
        of the following two types:

        -   a string: in this case the object with that name will be imported
        -   an actual object reference: that object is used directly

        Objects are usually either modules or classes. :meth:`from_object`
        loads only the uppercase attributes of the module/class. A ``dict``
        object will not work with :meth:`from_object` because the keys of a
        ``dict`` are not attributes of the ``dict`` class.

        You should not use this function to load the actual configuration but
        rather configuration defaults.  The actual config should be loaded
        with :meth:`from_pyfile` and ideally from a location not within the
        package because the package might be installed system wide.

        :param obj: an import name or object
        """
        if isinstance(obj, str):
            obj = import_string(obj)
        for key in dir(obj):
            if key.isupper():
                self[key] = getattr(obj, key)

    def from_file(self, filename: str, load, silent: bool = False, text: bool = True) -> bool:
        """Update the values in the config from a file that is loaded
        using the ``load`` parameter. The loaded data is passed to the
        :meth:`from_mapping` method.

        :param filename: The path to the data file. This can be an
            absolute path or relative to the config root path.
        :param load: A callable that takes a file handle and returns a
            mapping of loaded data from the file.
        :param silent: Ignore the file if it doesn't exist.
        :param text: Open the file in text or binary mode.
        :return: ``True`` if the file was loaded successfully.
        """
        filename = os.path.join(self.root_path, filename)

        try:
            with open(filename, "r" if text else "rb") as f:
                obj = load(f)
        except OSError as e:
            if silent and e.errno in (errno.ENOENT, errno.EISDIR):
                return False

            e.strerror = f"Unable to load configuration file ({e.strerror})"
            raise

        return self.from_mapping(obj)
'''

# Shaped after excalidraw's App.tsx: an arrow-function field split at a small budget,
# then a commented method.
APP_METHODS = """\
class App extends React.Component<AppProps, AppState> {
  private handleTextAutoResizeHandlePointerDown = (
    event: React.PointerEvent<HTMLElement>,
    element: ExcalidrawTextElement,
  ): void => {
    const sceneCoords = viewportCoordsToSceneCoords(event, this.state);
    const gridSize = this.getEffectiveGridSize();
    const [x, y] = getGridPoint(sceneCoords.x, sceneCoords.y, gridSize);
    const originalElement = this.scene.getNonDeletedElement(element.id);
    if (!originalElement || !isTextElement(originalElement)) {
      return;
    }
    this.setState({
      selectedElementIds: { [element.id]: true },
      resizingElement: element,
      editingTextElement: null,
    });
    this.store.scheduleCapture();
    const pointerState = this.initialPointerDownState(event, x, y);
    pointerState.resize.handleType = "e";
    pointerState.resize.isResizing = true;
    pointerState.originalElements.set(element.id, deepCopyElement(element));
    this.lastPointerDownWith = event.pointerType;
    window.addEventListener(EVENT.POINTER_MOVE, this.onPointerMoveFromPointerDown);
    window.addEventListener(EVENT.POINTER_UP, this.onPointerUpFromPointerDown);
    this.missingPointerEventCleanupEmitter.once((_event) => {
      this.removePointerListeners(pointerState);
    });
  };

  // NOTE: Hot path for hit testing, so prefer the cached scene elements and
  // keep the filters cheap: this runs on every pointer move over the canvas.
  public getElementAtPosition(
    x: number,
    y: number,
    opts?: { preferSelected?: boolean; includeBoundTextElement?: boolean },
  ): NonDeleted<ExcalidrawElement> | null {
    const allHitElements = this.getElementsAtPosition(x, y, opts?.includeBoundTextElement);
    if (allHitElements.length > 1) {
      if (opts?.preferSelected) {
        for (let index = allHitElements.length - 1; index > -1; index--) {
          if (this.state.selectedElementIds[allHitElements[index].id]) {
            return allHitElements[index];
          }
        }
      }
      const elementWithHighestZIndex = allHitElements[allHitElements.length - 1];
      return isPointInElement(elementWithHighestZIndex, x, y) ? elementWithHighestZIndex : null;
    }
    if (allHitElements.length === 1) {
      return allHitElements[0];
    }
    return null;
  }
}
"""


def chunks_of(text: str, path: str, language: str, max_tokens: int, min_tokens: int):
    analysis = analyze_text(text, path, language)
    config = ChunkConfig(max_tokens=max_tokens, min_tokens=min_tokens)
    chunks = chunk_analysis(analysis, config, repo="test")
    check_invariants(analysis, chunks, max_tokens)
    return analysis, chunks


def holding(chunks, needle: str):
    return next(chunk for chunk in chunks if needle in chunk.text)


@pytest.mark.parametrize("max_tokens", [192, 208, 224])
def test_the_tail_of_a_split_python_method_joins_its_own_method(max_tokens):
    """At 208 the old chunker gave "Config.from_file L25-42" starting with
    ``for key in dir(obj):``; at 192 the tail took ``def from_file`` with it."""
    analysis, chunks = chunks_of(CONFIG_METHODS, "config.py", "python", max_tokens, 48)
    tail = holding(chunks, "self[key] = getattr(obj, key)")
    assert tail.symbol == "Config.from_object"
    assert "from_file" not in tail.text
    head = holding(chunks, "def from_file")
    assert head.symbol == "Config.from_file"
    assert head.text.lstrip().startswith("def from_file")
    assert edge_report(analysis, chunks).foreign_starts == 0


@pytest.mark.parametrize("max_tokens", [128, 144])
def test_the_tail_of_a_split_tsx_method_joins_its_own_method(max_tokens):
    """At 128 the old chunker named "App.getElementAtPosition L26-38" a chunk that began
    with the last lines of the handler before it."""
    analysis, chunks = chunks_of(APP_METHODS, "App.tsx", "tsx", max_tokens, 32)
    tail = holding(chunks, "this.removePointerListeners(pointerState);")
    assert tail.symbol == "App.handleTextAutoResizeHandlePointerDown"
    assert "getElementAtPosition" not in tail.text
    assert all(
        chunk.text.lstrip().startswith(("// NOTE", "public getElementAtPosition"))
        for chunk in chunks
        if "public getElementAtPosition" in chunk.text
    )
    assert edge_report(analysis, chunks).foreign_starts == 0


@pytest.mark.parametrize("max_tokens", [112, 160, 176, 208, 224])
def test_a_leading_comment_rides_with_its_method_not_the_one_before(max_tokens):
    """At these budgets the old chunker left ``// NOTE: Hot path`` in the chunk of the
    handler above it (the comment and the method did not fit together)."""
    analysis, chunks = chunks_of(APP_METHODS, "App.tsx", "tsx", max_tokens, 32)
    note = holding(chunks, "// NOTE: Hot path")
    assert "onPointerUpFromPointerDown" not in note.text
    assert "removePointerListeners" not in note.text
    assert note.text.lstrip().startswith("// NOTE: Hot path")
    assert edge_report(analysis, chunks).stranded_riders == 0


def test_decorators_of_a_split_python_method_stay_with_it():
    body = "\n".join(f"        total += self.weights[{i}] * values[{i}] - {i}" for i in range(30))
    text = (
        "class Scorer:\n"
        "    def reset(self):\n"
        + "\n".join(f"        self.weights[{i}] = {i}" for i in range(14))
        + "\n        self.total = 0\n\n"
        "    @property\n    @functools.cache\n    def score(self, values):\n"
        "        total = 0\n" + body + "\n        return total\n"
    )
    analysis, chunks = chunks_of(text, "scorer.py", "python", 128, 32)
    decorated = holding(chunks, "@property")
    assert decorated.symbol == "Scorer.score"
    assert "self.weights[13] = 13" not in decorated.text
    assert edge_report(analysis, chunks).stranded_riders == 0


@pytest.mark.parametrize("max_tokens", [64, 80, 160, 176])
def test_consecutive_chunks_do_not_share_a_line(max_tokens):
    """The old chunker ended one chunk on ``public getElementAtPosition`` and began the
    next with ``(`` on the same line (and ``{`` after ``): ... | null``)."""
    analysis, chunks = chunks_of(APP_METHODS, "App.tsx", "tsx", max_tokens, 16)
    for before, after in zip(chunks, chunks[1:], strict=False):
        assert before.end_line < after.start_line, (before.text[-40:], after.text[:40])
    assert not any(chunk.starts_mid_line for chunk in chunks)
    assert edge_report(analysis, chunks).mid_line_starts == 0


def test_a_cut_inside_a_line_over_the_budget_is_flagged_and_counted():
    text = "const table = [" + ", ".join(str(i % 7) for i in range(400)) + "];\n"
    analysis, chunks = chunks_of(text, "table.ts", "typescript", 64, 0)
    flagged = [chunk.starts_mid_line for chunk in chunks]
    assert flagged[0] is False and all(flagged[1:]) and len(chunks) > 3
    assert edge_report(analysis, chunks).mid_line_starts == len(chunks) - 1
    assert chunks[1].to_dict()["starts_mid_line"] is True


ROOT = Path(__file__).resolve().parents[2]
TEST_REPOSITORIES = sorted(p for p in (ROOT / "sample_repos").iterdir() if p.is_dir()) + [
    ROOT / "tests" / "data" / "polyglot",
    ROOT / "tests" / "data" / "parse_errors",
]
# The digest's budgets (tests/test_chunks_version.py), the default, and small ones.
BUDGETS = [(512, 64), (320, 48), (256, 48), (128, 16), (64, 8)]


@pytest.mark.parametrize("folder", TEST_REPOSITORIES, ids=lambda p: p.name)
def test_edges_of_every_test_repository(folder):
    """Every file of the test repositories, every profile at 512/64 and the default
    profile at each budget: chunks are ordered, do not overlap and cover the file
    (``check_invariants``); no chunk starts inside a unit other than its own (or one
    that holds it, or one it holds); no leading comment is left behind; and the only
    chunks that share a line with the one before say so (``starts_mid_line``)."""
    repo = open_repository(folder)
    configs = [ChunkConfig(max_tokens=m, min_tokens=n) for m, n in BUDGETS]
    configs += [configs[0].with_(profile=name) for name in PROFILE_NAMES]
    faults: list[str] = []
    for source in repo.source_files():
        analysis = analyze(source, ChunkConfig().encoding)
        for config in configs:
            chunks = chunk_analysis(analysis, config, repo=repo.name)
            check_invariants(analysis, chunks, config.max_tokens)
            where = f"{config.max_tokens}/{config.min_tokens} {config.profile}"
            for before, after in zip([None, *chunks], chunks, strict=False):
                if after.has_error:  # where the tree is wrong, unit extents are guesses
                    continue
                foreign = foreign_unit(after, analysis.units)
                if foreign is not None:
                    faults.append(f"{where} {after.file}:{after.start_line} in {foreign.qualname}")
                if before is not None and stranded_rider(analysis, before, after):
                    faults.append(f"{where} {after.file}:{after.start_line} comment left behind")
                if before is not None and before.end_line == after.start_line:
                    assert after.starts_mid_line, (source.info.path, after.start_line)
    assert not faults, faults[:10]
