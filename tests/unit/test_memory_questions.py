"""Which chat messages only ask (not written by the adapters by default: docs/benchmarks/hygiene.md)."""

from __future__ import annotations

import pytest

from recall_core.memory.text.questions import asks, ends_asking, only_asks, without_questions
from recall_core.remember import last_exchange


@pytest.mark.parametrize(
    "text",
    ["What is my dog called?", "Hi again. Where does my goddaughter live these days?", "What? Really?",
     "Quick question: where do I work?", "  where do I work?\n"],
)  # fmt: skip
def test_messages_that_only_ask(text):
    assert only_asks(text)


@pytest.mark.parametrize(
    "text",
    ["I adopted a cat named Miso.", "My dog Rex is sick, what should I do?", "Thanks!", "", "where do i work",
     "Family stuff is so confusing. Where does my goddaughter live these days?",
     "I moved to Lyon last week; do you know a good bakery there?"],
)  # fmt: skip
def test_messages_that_say_something_or_ask_nothing(text):
    assert not only_asks(text)


def test_last_exchange_leaves_a_question_out_only_when_told():
    messages = [{"role": "user", "content": "What is my dog called?"}]
    roles = ("user", "assistant")
    assert last_exchange(messages, "Biscuit.", roles) == [("user", "What is my dog called?"), ("assistant", "Biscuit.")]
    assert last_exchange(messages, "Biscuit.", roles, questions=False) == [("assistant", "Biscuit.")]
    stated = [{"role": "user", "content": "My dog is called Biscuit, isn't he cute?"}]
    assert last_exchange(stated, "Noted.", roles, questions=False)[0] == ("user", "My dog is called Biscuit.")


@pytest.mark.parametrize(
    ("text", "stated"),
    [("I adopted a cat named Miso.", "I adopted a cat named Miso."), ("Yes.", "Yes."),
     ("My dog Rex is sick, what should I do?", "My dog Rex is sick."),
     ("I moved to Lyon last week; do you know a good bakery there?", "I moved to Lyon last week."),
     ("Where is my car? I parked it near the old station this morning.", "I parked it near the old station this morning."),
     ("Hi! Quick question: where do I work?", ""), ("What is my dog called?", "")],
)  # fmt: skip
def test_what_a_message_states_without_its_questions(text, stated):
    assert without_questions(text) == stated


@pytest.mark.parametrize(
    ("text", "stated"),
    [("I weigh 72.5 kg now, is that healthy for my height?", "I weigh 72.5 kg now."),
     ("My rent went up to £1,250.50 a month, can you help me budget?", "My rent went up to £1,250.50 a month."),
     ("My appointment with Dr. Patel is at 4:30 p.m. on Friday, what should I bring?",
      "My appointment with Dr. Patel is at 4:30 p.m. on Friday."),
     ("I moved to the U.S. in 2019 and work at Google, any tips for taxes?",
      "I moved to the U.S. in 2019 and work at Google."),
     ("I live in St. Louis, where should I eat?", "I live in St. Louis."),
     ("Version 3.11.4 of Python is installed on my laptop, should I upgrade?",
      "Version 3.11.4 of Python is installed on my laptop."),
     ("My email is jane.doe@example.com and my site is www.jane.io, can you check it?",
      "My email is jane.doe@example.com and my site is www.jane.io."),
     ("I'm allergic to peanuts... and shellfish. What can I cook tonight?", "I'm allergic to peanuts... and shellfish."),
     ("My allergies:\n- peanuts\n- shellfish\n- penicillin\nWhat can I safely eat at the wedding?",
      "My allergies:\n- peanuts\n- shellfish\n- penicillin"),
     ("I booked https://hotel.example/book?id=55 for June 3rd-5th. Is that a good area?",
      "I booked https://hotel.example/book?id=55 for June 3rd-5th."),
     ("I live in the U.S. What is the tax rate?", "I live in the U.S."),
     ("i live in lyon. i work at a bank. any tips?", "i live in lyon. i work at a bank."),
     ("Room 7, is that right?", "Room 7."),
     ("我住在北京，在一家银行工作。你能推荐一些餐馆吗？", "我住在北京，在一家银行工作。"),
     ("谢谢！你能推荐餐馆吗？", ""),
     # a second review's cases: a title or initials that end the statement before the question
     ("I live on Main St. What is nearby?", "I live on Main St."),
     ("I work at Acme Inc. What's the address?", "I work at Acme Inc."),
     ("The answer is no. Where do I go from here?", "The answer is no."),
     ("I was born in the U.K. how about you?", "I was born in the U.K."),
     ("my flight lands at 4 p.m. where should i eat?", "my flight lands at 4 p.m."),
     ("I live on Main St. Is it safe?", "I live on Main St."),
     # a question glued to an emoji, a quote or a bracket is still a question
     ("Where should I eat tonight?😋 I live in Lyon now.", "😋 I live in Lyon now."),
     ('Where do I live?" I asked my sister yesterday.', "I asked my sister yesterday."),
     ("(where do I live?) I moved to Lyon last week.", "I moved to Lyon last week."),
     # list numbers and markers are no facts
     ("1. where do I live?\n2. what is my dog called?", ""), ("Q1. where do I live? Q2. what's my job?", ""),
     # a third review's: a question is dropped whole, a title or initials inside it notwithstanding
     ("Where is the best pizza in St. Louis?", ""), ("Is it 4 p.m. in London right now?", ""),
     ("Should I see Dr. Patel or Dr. Lee about my knee?", ""), ("Can you recommend a vet near 5th Ave. in New York?", ""),
     ("My flight is on Oct. 12. What should I pack?", "My flight is on Oct. 12."),
     ("My code has `if x != None:` and it fails on Python 3.12. Why?",
      "My code has `if x != None:` and it fails on Python 3.12."),
     ("My site https://x.com/page?&a=1 is slow since Monday. Why?", "My site https://x.com/page?&a=1 is slow since Monday."),
     ('My son yelled "I hate broccoli!" at dinner yesterday. What should I cook?',
      'My son yelled "I hate broccoli!" at dinner yesterday.'),
     # a fourth review's: a statement before a question that opens with no question word, or after a quote
     ("I live on Main St. Thoughts?", "I live on Main St."), ("I live in the U.S. and you?", "I live in the U.S."),
     ("i'm from the u.s. hbu?", "i'm from the u.s."), ("I moved here in Oct. Know any good doctors?", "I moved here in Oct."),
     ('I just finished reading "Dune." any recommendations?', 'I just finished reading "Dune."'),
     ("I'm allergic to nuts (really allergic!) any tips for eating out?", "I'm allergic to nuts (really allergic!)"),
     ("**Where should I eat tonight?** I live in Paris and I love sushi.", "** I live in Paris and I love sushi."),
     ("Can you help?<br>I work at Acme as a nurse.", "<br>I work at Acme as a nurse."),
     # a fifth review's: no space after a point; a question with a comma after a title or "..."
     ("I live in Paris.Where should I eat?", "I live in Paris."), ("Where do you live?I live in Paris.", "I live in Paris."),
     ("what's the weather?i'm in oslo today", "i'm in oslo today"), ("I just moved to Lyon!Any tips?", "I just moved to Lyon!"),
     ("I told her no. Was that mean, really?", "I told her no."),
     ("I was born in the U.K. how about you, mate?", "I was born in the U.K."),
     ("I'm allergic to peanuts... any snack ideas, maybe?", "I'm allergic to peanuts...")],
)  # fmt: skip
def test_numbers_names_and_lists_in_a_message_that_asks_are_written_whole(text, stated):
    """A sentence ended at every point until 2026-12-07, and the pieces left went as fillers: the
    weight was not written at all, "St. Louis" became "St.", a list's items went (a reviewer)."""
    assert without_questions(text) == stated


@pytest.mark.parametrize(
    "text",
    ["What is my dog called?", "which gym am i at now", "wat instrument does marcus play in band, im making him a cake topper",
     "Kindly remind me of the date of Lakshmi's birthday.", "Tell me my sister's name.", "where's the vet again",
     "I moved to Lyon last week; know a good bakery there?"],
)  # fmt: skip
def test_messages_that_ask_with_or_without_a_question_mark(text):
    assert asks(text)


@pytest.mark.parametrize(
    "text",
    ["I started a new job today.", "morning. tryna learn rust on weekends, the borrow checker is bullying me",
     "Thanks!", "", "We moved to Lima last month."],
)  # fmt: skip
def test_messages_that_only_state(text):
    assert not asks(text)


@pytest.mark.parametrize(
    ("text", "stated"),
    [("My cat is called Tom, what should I feed him\u061f", "My cat is called Tom."),
     ("\u0627\u0646\u062a\u0642\u0644\u062a \u0625\u0644\u0649 \u062f\u0628\u064a \u0627\u0644\u0623\u0633\u0628\u0648\u0639 "
      "\u0627\u0644\u0645\u0627\u0636\u064a\u060c \u0623\u064a\u0646 \u0623\u062c\u062f \u0645\u0637\u0639\u0645\u0627\u061f",
      "\u0627\u0646\u062a\u0642\u0644\u062a \u0625\u0644\u0649 \u062f\u0628\u064a \u0627\u0644\u0623\u0633\u0628\u0648\u0639 "
      "\u0627\u0644\u0645\u0627\u0636\u064a."),
     ("Where do I work\u061f I started at the bakery on Monday.", "I started at the bakery on Monday.")],
)  # fmt: skip
def test_the_arabic_question_mark_and_comma_are_read_as_their_latin_forms(text, stated):
    """"؟" asks as "?" does, and "،" ends a clause as "," does (until 2026-12-07 a question ending "؟"
    was written whole: the question came back as a note)."""
    assert without_questions(text) == stated
    assert not only_asks(text) and only_asks("Where do I work\u061f")


@pytest.mark.parametrize(
    ("text", "asking"),
    [("Where do you live? \U0001f60a", True), ("(any tips?)", True), ("what\uff1f", True), ("Really?!", True),
     ("is it?**", True), ("ok \u2753", True), ("see you at 5?\U0001f44d\U0001f3fd", True), ("no.", False), ("? not", False),
     ('My son keeps asking me "why?"', False), ("The book is at 9 (?)", False), ("?\u00b0", False), ("? ^^", False),
     ('```\nconfirm("Are you sure?")\n```', False), ("where \U0001f60a", False), ("What's your dog's name? \u2b50", True),
     ("\u0623\u064a\u0646 \u062a\u0633\u0643\u0646\u061f\u200f", True), ("Anything else? \u23f0", True),
     ("Are you coming tonight? \U0001fa77", True), ("ok \u2049\ufe0f", True), ("Really\u203d", True),
     ("(any tips? \U0001f60a)", True), ("\uff08\u4f60\u53bb\u8fc7\u5317\u4eac\u5417\uff1f\uff09", True)],
)  # fmt: skip
def test_what_ends_by_asking(text, asking):
    """Emoji, one emphasis run, one bracket and "!" may close a question; a quote, a code fence and a
    hedge "(?)" do not ask (a reviewer's cases, 2026-12-07)."""
    assert ends_asking(text) is asking


@pytest.mark.parametrize(
    ("text", "stated"),
    [("\u0645\u06cc\u06ba \u0644\u0627\u06c1\u0648\u0631 \u0645\u0646\u062a\u0642\u0644 \u06c1\u0648\u0627\u06d4 "
      "\u0645\u062c\u06be\u06d2 \u0627\u0686\u06be\u0627 \u0631\u06cc\u0633\u062a\u0648\u0631\u0627\u0646 "
      "\u06a9\u06c1\u0627\u06ba \u0645\u0644\u06d2 \u06af\u0627\u061f",
      "\u0645\u06cc\u06ba \u0644\u0627\u06c1\u0648\u0631 \u0645\u0646\u062a\u0642\u0644 \u06c1\u0648\u0627\u06d4"),
     ("\u092e\u0948\u0902 \u092a\u093f\u091b\u0932\u0947 \u0939\u092b\u094d\u0924\u0947 \u0926\u093f\u0932\u094d\u0932\u0940 "
      "\u0906\u092f\u093e\u0964 \u0905\u091a\u094d\u091b\u093e \u0916\u093e\u0928\u093e \u0915\u0939\u093e\u0901 "
      "\u092e\u093f\u0932\u0947\u0917\u093e?",
      "\u092e\u0948\u0902 \u092a\u093f\u091b\u0932\u0947 \u0939\u092b\u094d\u0924\u0947 \u0926\u093f\u0932\u094d\u0932\u0940 "
      "\u0906\u092f\u093e\u0964"),
     ("\u0647\u0644 \u062a\u0639\u0631\u0641 \u0645\u0637\u0639\u0645\u0627 \u062c\u064a\u062f\u0627 \u0641\u064a "
      "\u062f\u0628\u064a\u060c \u0623\u0628\u0648\u0638\u0628\u064a\u060c \u0623\u0648 \u0627\u0644\u0634\u0627\u0631\u0642\u0629\u061f",
      ""),
     ("\u0645\u0646 \u062f\u0631 \u062a\u0647\u0631\u0627\u0646 \u0632\u0646\u062f\u06af\u06cc \u0645\u06cc\u200c\u06a9\u0646\u0645\u060c "
      "\u06a9\u062c\u0627 \u063a\u0630\u0627 \u0628\u062e\u0648\u0631\u0645\u061f",
      "\u0645\u0646 \u062f\u0631 \u062a\u0647\u0631\u0627\u0646 \u0632\u0646\u062f\u06af\u06cc \u0645\u06cc\u200c\u06a9\u0646\u0645."),
     ("\u0643\u0645 \u0633\u0639\u0631 \u062a\u0630\u0643\u0631\u0629 \u0627\u0644\u0642\u0637\u0627\u0631 \u0645\u0646 "
      "\u062f\u0628\u064a\u060c \u0623\u0628\u0648\u0638\u0628\u064a\u060c \u0623\u0648 \u0627\u0644\u0634\u0627\u0631\u0642\u0629\u061f", "")],
)  # fmt: skip
def test_urdu_and_devanagari_full_stops_end_a_sentence_and_arabic_question_words_open_a_question(text, stated):
    """"I moved to Lahore۔ Where can I eat؟" keeps its statement (until 2026-12-07 the whole message
    was one question and nothing was written); an Arabic question with commas is a question."""
    assert without_questions(text) == stated
