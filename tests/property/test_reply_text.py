"""Reply text finished while it streams equals the whole text finished at once (stop strings cut,
the recall marker removed), wherever the stream cuts it."""

from __future__ import annotations

from hypothesis import given

from recall_core import RECALL_TOKEN
from recall_core.reply import TextFinisher, finish_text
from tests.property.strategies import cut_points, reply_texts


@given(text=reply_texts, cuts=cut_points)
def test_streamed_finishing_equals_whole_text(text, cuts):
    stops = ["STOP", "ba"]
    whole, _ = finish_text(text, stops)
    finisher = TextFinisher(stops)
    bounds = sorted({0, len(text), *[c for c in cuts if c <= len(text)]})
    pieces = [finisher.feed(text[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]
    assert "".join(pieces) + finisher.finish() == whole
    assert RECALL_TOKEN not in whole and "STOP" not in whole
