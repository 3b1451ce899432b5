"""How a reply is scored (``base.normal``, ``base.names``, ``base.score``): whole words, case,
accents and punctuation ignored, in any script; ASCII text reads as it always has."""

from __future__ import annotations

import re

import pytest

from recall_core.training.families import base


def _ascii_normal(text: str) -> str:
    """The scorer as it read ASCII before it read other scripts: every figure so far was scored so."""
    return " " + re.sub(r"[^a-z0-9]+", " ", text.lower()).strip() + " "


@pytest.mark.parametrize("text", [
    "Your cat is called Pudding.", "It's £8.20 -- was £7.55!", "I'd say 11th of August, at 9:30_am.",
    "  MIXED case\tand\nlines  ", "", "...",
])  # fmt: skip
def test_ascii_reads_as_it_always_has(text):
    assert base.normal(text) == _ascii_normal(text)


@pytest.mark.parametrize(("reply", "value", "named"), [
    ("We moved to Łódź in May.", "Łódź", True),
    ("We moved to Lodz in May.", "Łódź", True),  # a reply that drops the accents still names it
    ("We moved to Łódź in May.", "Lodz", True),
    ("I'd go there again.", "Łódź", False),  # once read as " d ", which "I'd" matched
    ("Gdańsk, then Gdynia.", "Gdansk", True),
    ("Snaefellsnes it is.", "Snæfellsnes", True),
    ("Ihr Zimmer ist in der Strasse.", "Straße", True),
    ("Вы живёте в Києві.", "Києві", True),
    ("Вы живёте в Києві.", "Київ", False),  # whole words: another form of the word is not it
    ("你住在東京。", "東京", True),  # no spaces between words: read a character at a time
    ("你住在京都。", "東京", False),
    ("ガイドさんの名前はさくらです。", "さくら", True),
    ("Wir ziehen nach Köln.", "Koln", True),
    ("मुझे दाल पसंद है।", "दिल", False),  # a vowel sign is part of its word (lentils, not heart)
    ("हिंदी में", "हिंदी", True),
    ("شُكْرًا لك", "شكرا", True),  # Arabic short vowels, written or not
    ("ข้าวผัด", "ขาว", False),  # a Thai tone mark is part of its letter (rice, not white)
    ("저는 서울에서 살아요", "서울", True),  # a Korean particle joins the word before it
    ("мой дом", "мои", False),  # й is not и
    ("Room № 12.", "No 12", True),  # compatibility forms read in lower case too
    ("It took 3½ years.", "2 years", False),  # fractions and superscripts are breaks, as before
    ("50 m² flat", "50 m", True),
    ("٢٠٢٤", "2024", True),
    ("İstanbul", "istanbul", True),
])  # fmt: skip
def test_a_value_is_named_in_any_script_accents_ignored(reply, value, named):
    assert base.names(reply, value) is named


def test_a_stale_value_written_without_its_accents_is_still_stale():
    question = base.Question("k", "u", "f", "Where does my sister live?", answers=("Xàtiva",), stale=("Kraków",),
                             evidence=((1, 0),))
    assert base.score(question, "She lives in Krakow.") == {"correct": False, "stale": True, "abstained": False}
    assert base.score(question, "In Xativa, since March.")["correct"]
