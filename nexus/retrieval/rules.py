"""The ranking stage's rules as data: every weight in one table, each with the figure that
chose it (``RankingRules``), and the ablation's map of which weights each rule owns
(``BOOSTS``). The stage itself is ``nexus.retrieval.ranking``; what a chunk earns on its own
is ``nexus.retrieval.evidence``; which candidates become hits and what each shows is
``nexus.retrieval.selection``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from nexus.config import ChunkConfig
from nexus.retrieval.embedding import is_static_model
from nexus.retrieval.selection import Selection


@dataclass(frozen=True)
class RankingRules:
    """Every weight of the ranking stage, chosen on the tuning half of the question set.

    Scores are on a 0-1 scale after fusion (the best candidate of each retriever gets
    1), so a boost of 0.1 moves a hit past candidates within a tenth of the best.
    """

    #: Candidates each retriever proposes (``nexus.retrieval.candidates``); the rest of
    #: the index is never re-ranked. 200 with ``window_share`` 0.5 (against 100 and 0):
    #: R@1k +0.017 on the tuning half, +0.014 held out, doc-query MRR@10 within 0.01 at
    #: fewer lines@5 on every doc set (bench/results/per_token*.md).
    candidates: int = 200
    #: For a symbol query, at most this many chunks that define the name join the
    #: candidates from the symbol table over every chunk (0: off), so a definition that
    #: neither retriever proposes can still be found.
    definition_lookup: int = 0
    #: Query feedback (``nexus.retrieval.candidates.candidates_for``; a sentence over a
    #: static model's index): the query's vector moves toward its ``feedback_hits`` best
    #: hits by ``feedback`` x their mean vector, and the candidates are chosen again with it
    #: (0: off). 0.5 with the best 2 (fast tier, tuning half, 320/48: NDCG@10 +0.010, R@1k
    #: +0.009; bench/results/per_token.md).
    feedback: float = 0.5
    feedback_hits: int = 2
    #: ``minmax``: each retriever's scores scaled to 0-1 over the candidates; ``rrf``:
    #: reciprocal rank fusion (1 / (60 + rank)), scaled so the best rank gets 1.
    fusion: str = "minmax"
    #: Share of the dense score in the fusion for a sentence; keywords get the rest. 0.5
    #: (was 0.6): with the stemmer joining word forms and folder and unit names in the
    #: keyword text, keywords earn an equal share (fast tier, tuning half: NDCG@10 +0.009,
    #: R@1k +0.007, R@4k +0.024, bench/results/per_token.md).
    natural_dense: float = 0.5
    #: ... for a sentence over an index of a model that reads the sentence as a whole
    #: (MiniLM, the quality tier; ``for_model``): its cosine earns more. 0.6 (quality
    #: tier, tuning half, 320/48: NDCG@10 +0.004, R@1k +0.031, R@2k +0.008, R@4k -0.013;
    #: doc MRR@10 dev +0.011, python-tuning +0.018; 0.55-0.8 measured). The static model
    #: stays at 0.5: 0.55 and 0.6 cost it 0.009 NDCG@10 and up to 0.025 R@1k.
    contextual_dense: float = 0.6
    #: ... for a bare or qualified name: names are matched by their words, not meaning
    #: (0.3, was 0.4, measured together with the sentence weight).
    symbol_dense: float = 0.3
    #: A chunk that defines the name a symbol query asks for (its symbol or a unit it holds).
    defines: float = 0.5
    #: ... a name written inside a sentence (``where is getCookie called``): weak evidence,
    #: as a sentence often names another unit to compare with (``like :func:`flat_map```).
    #: 0.15 moved no question and cost doc-comment sets up to 0.010 MRR@10 (python-tuning).
    defines_in_sentence: float = 0.05
    #: The same name in another case or as the qualified name's last part only.
    defines_loosely: float = 0.6  # x the boost above
    #: A sentence whose words name the chunk's own unit (``parse the cookie header`` ->
    #: ``parseCookieHeader``), x the share of the name's words the query holds. 0.1 (was
    #: 0.05) with 320/48 chunks: tuning questions R@1k +0.005, R@2k +0.018; doc MRR@10 dev
    #: +0.005, python-tuning +0.006 (0.15 and above lose; bench/results/per_token.md).
    name_words: float = 0.1
    #: Each query word found in the file's name or folders (at most two count).
    path_word: float = 0.05
    #: ... and the two weights above for a short topic (``evidence.is_topical``: "cookie
    #: parsing"), whose words are the code's own: ``for_topic``.
    #: 0.05, as for a sentence: 0.35 won the tuning half's topical questions (AST 256/32
    #: with the answer budget, R@1k 0.625 -> 0.671) but lost held out (topical R@1k 0.552
    #: -> 0.482, fast tier, 320/48), so the rule is kept and its weight left where it was.
    topic_path_word: float = 0.05
    topic_name_words: float = 0.1
    #: A file with several strong candidates: its best chunk is promoted once.
    file_coherence: float = 0.0
    #: How much each earlier hit of the same file takes off the next (spreads the top k).
    same_file: float = 0.0
    #: Hits of one file that come before the damping starts (saturation per file: two
    #: methods of one class often answer together; the third rarely adds to them).
    same_file_free: int = 1
    #: Other files first: a file's later hits wait behind the first hit of another file
    #: that scores at least this share of theirs (0: off; ``ranking.files_first``). A
    #: topic often lives in several files; an answer that spends its first tokens on one
    #: file's helpers reaches the others late. Tuning questions, re-scored, mean of the
    #: three styles, off -> 0.95: file targets R@1k 0.929 -> 0.940, NDCG@10 0.876 -> 0.885;
    #: definitions R@1k 0.770 -> 0.776, MRR@10 0.779 -> 0.786, NDCG@10 equal (0.701).
    #: 0.9 finds files sooner (R@1k 0.948) but costs definitions NDCG@10 and the fast tier.
    file_spread: float = 0.95
    #: Tests, examples, compatibility copies, re-export barrels, declarations: places that
    #: mention a name without being where it lives (only when they are indexed at all).
    #: (``test_file`` also damps a unit in a test module of a source file: Rust's ``mod
    #: tests``. Fast tier, tuning half, 320/48: NDCG@10 +0.003, R@4k +0.008.)
    test_file: float = 0.15
    example_file: float = 0.1
    compat_file: float = 0.08
    barrel_file: float = 0.1
    declaration_file: float = 0.08
    #: For a sentence (people ask where something is *done*): a chunk whose main unit only
    #: declares a shape (interface, struct, type alias, enum, trait)...
    shape_only: float = 0.3
    #: ... or that holds no unit at all (module code: imports, constants, data tables).
    module_code: float = 0.15
    #: A chunk that is mostly comment lines (a module's long doc block).
    mostly_comments: float = 0.0
    #: What counts as "strong" for file coherence: within this share of the best score.
    strong_share: float = 0.8
    #: A hit gathers the neighbouring chunks of its file that are candidates too into one
    #: result of at most this many lines (``nexus.retrieval.windows``; 0: one chunk a hit).
    #: A screenful: small AST units join their neighbours, 50-line windows stay alone.
    window_lines: int = 80
    #: ... and a neighbour joins a hit's window only when it scores at least this share
    #: of the hit (0: any neighbouring candidate), so windows grow only while they pay.
    #: 0.6 (was 0.5) with query feedback: fast tier, tuning half, 320/48, R@1k 0.643 ->
    #: 0.656, R@2k +0.005, 37 fewer lines@10, NDCG@10 -0.003; doc MRR@10 -0.004 at ~20
    #: fewer lines@5 (0.55-0.7 measured: bench/results/per_token.md). 0.5 with
    #: ``lead_unit_lines`` 120 (5 Dec, fast tier, 256/32 and the answer budget): tuning
    #: questions R@1k 0.740 -> 0.742, lines@10 184 -> 187, NDCG@10 0.664 -> 0.666, MRR@10
    #: 0.726 -> 0.734; doc MRR@10 dev 0.660 -> 0.672, python-tuning 0.463 -> 0.473
    #: (0.4 the same at a line more; bench/results/answers.md, answers_docs.md).
    window_share: float = 0.5
    #: The pieces of one unit (a function cut because it outgrew the chunk budget): a
    #: piece next to a hit of its unit joins that hit, within this many lines, instead of
    #: taking another place of the top k (0: off; ``nexus.retrieval.selection``).
    piece_lines: int = 0
    #: Lines the top 10 may show in all before windows grow (0: no such budget): the
    #: windows of the top 10 grow only with the lines their hits leave of it, best
    #: neighbours first. Chosen on the tuning half (fast tier, AST 320/48, mean of the three
    #: styles; 120-200 measured, the top 10's own chunks already take ~200 lines): R@1k 0.714
    #: -> 0.716, R@2k 0.807 -> 0.810, lines@10 386 -> 203, NDCG@10 0.673 -> 0.665. Held out:
    #: R@1k 0.657 -> 0.668, R@2k 0.746 -> 0.753, lines@10 397 -> 211, NDCG@10 0.664 -> 0.636
    #: (paraphrase -0.037: windows carried coverage; bench/results/answers.md).
    answer_lines: int = 140
    #: No line shown twice in one answer: a candidate whose lines a better hit shows is
    #: skipped, and a hit that shares its first or last lines with one shows the rest.
    distinct_lines: bool = True
    #: A hit longer than this shows only this many of its lines, those that hold the most
    #: query words (0: every line; ``nexus.retrieval.selection.matched_lines``). Off: 20
    #: with AST 256/32 and windows of 80 won the tuning half (R@1k 0.714 -> 0.753, NDCG@10
    #: 0.673 -> 0.679) but lost held out (NDCG@10 0.664 -> 0.615) and lets line windows
    #: beat AST on the sample doc queries (overlap50: a cut hit holds less than half of a
    #: long target; tests/test_end_to_end.py). 40 (long hits only; 5 Dec, fast tier, 256/32)
    #: bought the question sets a little (paraphrase R@1k tuning 0.572 -> 0.577, held out
    #: 0.526 -> 0.533, lines@10 -5 and -6, NDCG@10 equal; topics lose unless left whole) but
    #: cost the dev doc set MRR@10 0.660 -> 0.614 and R@1k 0.820 -> 0.779.
    hit_lines: int = 0
    #: Lines the top 10 may show in all (0: no cap): while they show more, the longest hit
    #: from the ``trim_from``-th on that is longer than ``trim_lines`` shows only its
    #: ``trim_lines`` lines that hold the most query words (``nexus.retrieval.ranking``).
    #: The first hits stay whole: a reader reads them first, and a doc query's target is
    #: counted when half its lines are shown. 200 / 25 / from the 4th (5 Dec), chosen on
    #: the tuning sets as the trim that keeps every style within 200 lines@10 and the
    #: doc-comment tuning sets within 0.02 MRR@10 of the rules before issue 39: questions
    #: (re-scored, mean of the styles) R@1k 0.769 -> 0.770, R@2k 0.843 -> 0.845, lines@10
    #: 175 -> 171 (long paraphrases 196 -> 192), NDCG@10 equal; doc MRR@10 dev 0.669 both,
    #: Python tuning 0.469 -> 0.467. Trims of 20 saved 2 lines more but cost Python tuning
    #: 0.003 MRR@10 and dev 0.015 R@2k (a trimmed hit holds under half of a long target);
    #: caps of 160-200 and trimming from the 3rd or 6th hit measured within 0.003 R@1k.
    top_lines: int = 200
    trim_lines: int = 25
    trim_from: int = 4
    #: The first hit takes in the candidates next to it that score at least
    #: ``window_share`` of it while the top 10 fill, within this many lines (0: off;
    #: ``nexus.retrieval.selection``). A doc query's target often sits next to the chunk
    #: that ranks first. 80 (60 and 120 measured; fast tier, AST 256/32, tuning half, mean of
    #: the styles): R@1k 0.738 -> 0.740, lines@10 172 -> 184, NDCG@10 0.675 -> 0.664 (a hit
    #: that shows two targets gains once), MRR@10 0.704 -> 0.726; doc-comment tuning sets'
    #: MRR@10 dev 0.605 -> 0.660, Python tuning 0.430 -> 0.463 against the defaults before
    #: (320/48 without it), at equal lines@5 (bench/results/answers.md, answers_docs.md).
    lead_lines: int = 80
    #: ... and within this many lines for a piece of the lead hit's own unit (a long
    #: function cut by the chunk budget; 0: ``lead_lines``; with ``lead_lines`` 0, only
    #: the unit's pieces join). 120 with ``window_share`` 0.5
    #: (5 Dec; see there). 120 for every neighbour bought the same but let the sample's
    #: 50-line windows join in pairs and beat AST chunks on its doc queries
    #: (tests/test_end_to_end.py).
    lead_unit_lines: int = 120
    #: A symbol query's hits show their own units alone: no windows, and the first hit
    #: takes in only the other pieces of its own unit (``for_symbol``). A name asks for its
    #: definition; the lines around it are other units. 5 Dec (fast tier, AST 256/32,
    #: tuning half, 24 symbol questions): lines@10 168 -> 152, R@1k and R@2k 1.000 both,
    #: NDCG@10 0.953 both; the doc-comment tuning sets' name queries (overlap50) keep their
    #: MRR@10 (dev 0.972 -> 0.969, Python tuning 0.943 -> 0.942) at 7-13 fewer lines@5.
    #: Each hit's own chunk alone (no pieces either): 146 lines and NDCG@10 0.969 on the
    #: questions, but name-query MRR@10 dev 0.920, Python tuning 0.878: a long definition's
    #: first piece holds under half of it.
    symbol_hits_alone: bool = True

    def selection(self) -> Selection:
        """What hit selection (``nexus.retrieval.selection``) may do under these rules."""
        return Selection(
            window_lines=self.window_lines,
            window_share=self.window_share,
            piece_lines=self.piece_lines,
            answer_lines=self.answer_lines,
            distinct_lines=self.distinct_lines,
            lead_lines=self.lead_lines,
            lead_unit_lines=self.lead_unit_lines,
        )

    def for_symbol(self) -> RankingRules:
        """These rules for a symbol query (``symbol_hits_alone``)."""
        if not self.symbol_hits_alone:
            return self
        return replace(self, window_lines=0, lead_lines=0)

    def for_topic(self) -> RankingRules:
        """These rules for a short topical query (``topic_path_word``, ``topic_name_words``)."""
        return replace(self, path_word=self.topic_path_word, name_words=self.topic_name_words)

    def for_model(self, model: str) -> RankingRules:
        """These rules as they apply to an index of ``model``'s vectors: a static model's
        get query feedback and ``natural_dense``; a model that reads the sentence itself
        (MiniLM) gets no feedback (it cost MiniLM 0.009-0.011 doc MRR@10) and
        ``contextual_dense``. Applying it twice changes nothing more."""
        if is_static_model(model):
            return self
        return replace(self, feedback=0.0, natural_dense=self.contextual_dense)

    def without(self, rule: str) -> RankingRules:
        """These rules with one boost or damping switched off (for the ablation)."""
        if rule not in BOOSTS:
            raise ValueError(f"unknown rule {rule!r}; rules: {', '.join(BOOSTS)}")
        return replace(self, **{field: type(getattr(self, field))(0) for field in BOOSTS[rule]})


#: The rules an ablation switches off one at a time, and the weights each one owns.
BOOSTS: dict[str, tuple[str, ...]] = {
    "definition": ("defines", "defines_in_sentence", "definition_lookup"),
    "name words": ("name_words",),
    "path": ("path_word",),
    "file coherence": ("file_coherence",),
    "same-file damping": ("same_file",),
    "other files first": ("file_spread",),
    "file priors": (
        "test_file",
        "example_file",
        "compat_file",
        "barrel_file",
        "declaration_file",
    ),
    "comment damping": ("mostly_comments",),
    "kind priors": ("shape_only", "module_code"),
    "result windows": ("window_lines",),
    "merged pieces": ("piece_lines",),
    "distinct lines": ("distinct_lines",),
    "hits cut to matched lines": ("hit_lines",),
    "top 10's line cap": ("top_lines",),
    "lead hit's neighbours": ("lead_lines", "lead_unit_lines"),
    "symbol hits alone": ("symbol_hits_alone",),
}
DEFAULT_RULES = RankingRules()


def rules_for(config: ChunkConfig) -> RankingRules | None:
    """The ranking rules a search with ``config`` uses (None: today's hybrid score)."""
    return DEFAULT_RULES if config.ranking else None
